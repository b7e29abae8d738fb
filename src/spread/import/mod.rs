//! Docker Swarm's own objects in: `docker node inspect`, `docker service inspect` and `docker
//! inspect` of tasks.
