//! Host-failure handling: a deterministic state machine over reports and an injected clock.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The failure handling's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailureTimers {
    /// How long to wait after a down report before checking (default 30 s).
    pub down_wait: Duration,
    /// How long the check may take (default 5 s); no answer by then means "still down".
    pub check_timeout: Duration,
    /// How long to wait for the supervisor when the host is up but it is not (default 30 s).
    pub supd_wait: Duration,
}

impl Default for FailureTimers {
    fn default() -> Self {
        FailureTimers {
            down_wait: Duration::from_secs(30),
            check_timeout: Duration::from_secs(5),
            supd_wait: Duration::from_secs(30),
        }
    }
}

impl FailureTimers {
    /// Timers of the given lengths.
    pub fn new(down_wait: Duration, check_timeout: Duration, supd_wait: Duration) -> Self {
        FailureTimers { down_wait, check_timeout, supd_wait }
    }
}

/// A report about a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
#[non_exhaustive]
pub enum HostEvent {
    /// The host is down (unreachable).
    HostDown,
    /// The host is up and its supervisor reports: both are running.
    HostUp,
    /// The host is up but its supervisor (`supd`) is not running.
    SupdDown,
    /// The supervisor runs again (so the host is up).
    SupdUp,
    /// The answer to a [`ActionKind::Probe`].
    ProbeResult {
        /// Whether the host answered.
        host_up: bool,
        /// Whether its supervisor runs.
        supd_running: bool,
    },
    /// The host was deleted from the site.
    HostRemoved,
    /// The host joined the site.
    HostAdded,
}

/// Which instances on a failed host to reschedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Instances of services with exactly one replica (a failed host).
    SingleReplica,
    /// Every instance (a removed host).
    All,
}

/// What the caller should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "action")]
#[non_exhaustive]
pub enum ActionKind {
    /// A failure report was taken; nothing happens before `until`.
    Wait {
        /// End of the wait.
        until: Duration,
    },
    /// Check whether the host is still down; answer with [`HostEvent::ProbeResult`] before
    /// `deadline` (no answer means still down).
    Probe {
        /// When the check gives up.
        deadline: Duration,
    },
    /// Reschedule the instances `scope` selects
    /// ([`ServiceScheduler::reschedule`](super::ServiceScheduler::reschedule)).
    Reschedule {
        /// Which instances.
        scope: Scope,
    },
    /// The host and its supervisor are back: pending timers are cancelled; nothing moves
    /// back, but unschedulable instances may be retried.
    Recovered,
    /// A host joined: nothing moves, but unschedulable instances may be retried.
    RetryUnschedulable,
}

/// An action, when it falls due and for which host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Action {
    /// When it happens on the injected clock (a timer's due time, or the report's time).
    pub at: Duration,
    /// The host.
    pub host: String,
    /// What to do.
    pub kind: ActionKind,
}

/// Where a host is in the failure handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// Up with its supervisor running.
    Healthy,
    /// Reported failing; waiting until the given time before checking.
    Waiting(Duration),
    /// Being checked until the given deadline.
    Checking(Duration),
    /// Up without its supervisor; waiting until the given time.
    SupervisorWait(Duration),
    /// Still failing after the waits: its single-replica instances were rescheduled.
    FailedOver,
}

#[derive(Debug, Clone, Copy)]
struct Track {
    host_up: bool,
    supd_up: bool,
    phase: Phase,
}

impl Track {
    fn healthy(&self) -> bool {
        self.host_up && self.supd_up
    }

    fn due(&self) -> Option<Duration> {
        match self.phase {
            Phase::Waiting(t) | Phase::Checking(t) | Phase::SupervisorWait(t) => Some(t),
            Phase::Healthy | Phase::FailedOver => None,
        }
    }
}

/// The host-failure state machine. Reports go in with [`handle`](FailureMonitor::handle), time
/// moves with [`advance`](FailureMonitor::advance), and both return the [`Action`]s that fell
/// due, in time order (ties by host name). No sleeping, no threads: the caller owns the clock
/// and may sleep until [`next_deadline`](FailureMonitor::next_deadline).
///
/// ```
/// use placewise::service::{ActionKind, FailureMonitor, HostEvent, Scope};
/// use std::time::Duration;
///
/// let s = Duration::from_secs;
/// let mut m = FailureMonitor::default();
/// m.handle(s(0), "edge-3", HostEvent::HostDown);
/// let actions = m.advance(s(40));
/// assert_eq!(actions[0].kind, ActionKind::Probe { deadline: s(35) });
/// assert_eq!((actions[1].at, actions[1].kind), (s(35), ActionKind::Reschedule { scope: Scope::SingleReplica }));
/// ```
#[derive(Debug, Clone, Default)]
pub struct FailureMonitor {
    timers: FailureTimers,
    now: Duration,
    hosts: BTreeMap<String, Track>,
}

impl FailureMonitor {
    /// A monitor with these timers, at time zero, knowing no host (a host is assumed healthy
    /// until reported otherwise).
    pub fn new(timers: FailureTimers) -> Self {
        FailureMonitor { timers, now: Duration::ZERO, hosts: BTreeMap::new() }
    }

    /// The current time (the latest seen; time never goes back).
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The host's phase (`None` for a removed or never-seen host).
    pub fn phase(&self, host: &str) -> Option<Phase> {
        self.hosts.get(host).map(|t| t.phase)
    }

    /// The earliest pending timer.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.hosts.values().filter_map(Track::due).min()
    }

    /// Moves the clock to `now` (an earlier time is taken as the current one) and returns the
    /// actions of every timer due by then, each at its own due time.
    pub fn advance(&mut self, now: Duration) -> Vec<Action> {
        let mut out = Vec::new();
        let now = now.max(self.now);
        loop {
            let next = self.hosts.iter().filter_map(|(h, t)| t.due().map(|d| (d, h.clone()))).min();
            let Some((due, host)) = next.filter(|(d, _)| *d <= now) else { break };
            self.now = due;
            let Some(track) = self.hosts.get_mut(&host) else { break };
            let at = due;
            match track.phase {
                Phase::Waiting(_) => {
                    let deadline = at + self.timers.check_timeout;
                    track.phase = Phase::Checking(deadline);
                    out.push(Action { at, host, kind: ActionKind::Probe { deadline } });
                }
                // No answer within the timeout: the host is still down.
                Phase::Checking(_) => {
                    track.host_up = false;
                    self.conclude(at, host, &mut out);
                }
                Phase::SupervisorWait(_) => {
                    track.phase = Phase::FailedOver;
                    out.push(Action { at, host, kind: ActionKind::Reschedule { scope: Scope::SingleReplica } });
                }
                Phase::Healthy | Phase::FailedOver => {}
            }
        }
        self.now = now;
        out
    }

    /// The end of a check, with the track's flags as the answer.
    fn conclude(&mut self, at: Duration, host: String, out: &mut Vec<Action>) {
        let Some(track) = self.hosts.get_mut(&host) else { return };
        if !track.host_up {
            track.phase = Phase::FailedOver;
            out.push(Action { at, host, kind: ActionKind::Reschedule { scope: Scope::SingleReplica } });
        } else if !track.supd_up {
            let until = at + self.timers.supd_wait;
            track.phase = Phase::SupervisorWait(until);
            out.push(Action { at, host, kind: ActionKind::Wait { until } });
        } else {
            track.phase = Phase::Healthy;
            out.push(Action { at, host, kind: ActionKind::Recovered });
        }
    }

    /// Takes a report at time `now`: first advances the clock (firing due timers), then
    /// applies the report. Returns every action, in order.
    pub fn handle(&mut self, now: Duration, host: &str, event: HostEvent) -> Vec<Action> {
        let mut out = self.advance(now);
        let at = self.now;
        let name = host.to_owned();
        match event {
            HostEvent::HostRemoved => {
                self.hosts.remove(host);
                out.push(Action { at, host: name, kind: ActionKind::Reschedule { scope: Scope::All } });
                return out;
            }
            HostEvent::HostAdded => {
                self.hosts.insert(name.clone(), Track { host_up: true, supd_up: true, phase: Phase::Healthy });
                out.push(Action { at, host: name, kind: ActionKind::RetryUnschedulable });
                return out;
            }
            _ => {}
        }
        let track =
            self.hosts.entry(name.clone()).or_insert(Track { host_up: true, supd_up: true, phase: Phase::Healthy });
        match event {
            HostEvent::HostDown => track.host_up = false,
            HostEvent::HostUp | HostEvent::SupdUp => (track.host_up, track.supd_up) = (true, true),
            HostEvent::SupdDown => (track.host_up, track.supd_up) = (true, false),
            HostEvent::ProbeResult { host_up, supd_running } => {
                (track.host_up, track.supd_up) = (host_up, host_up && supd_running);
                if matches!(track.phase, Phase::Checking(_)) {
                    self.conclude(at, name, &mut out);
                    return out;
                }
            }
            HostEvent::HostRemoved | HostEvent::HostAdded => {}
        }
        let healthy = track.healthy();
        match (track.phase, healthy) {
            (Phase::Healthy, false) => {
                let until = at + self.timers.down_wait;
                track.phase = Phase::Waiting(until);
                out.push(Action { at, host: name, kind: ActionKind::Wait { until } });
            }
            (Phase::Waiting(_) | Phase::Checking(_) | Phase::SupervisorWait(_) | Phase::FailedOver, true) => {
                track.phase = Phase::Healthy;
                out.push(Action { at, host: name, kind: ActionKind::Recovered });
            }
            // Still failing: the running timer decides (a supervisor wait ends in a reschedule
            // even if the host went down meanwhile).
            _ => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn kinds(actions: &[Action]) -> Vec<(u64, ActionKind)> {
        actions.iter().map(|a| (a.at.as_secs(), a.kind)).collect()
    }

    #[test]
    fn configurable_timers() {
        let mut m = FailureMonitor::new(FailureTimers::new(s(10), s(2), s(7)));
        m.handle(s(0), "h", HostEvent::SupdDown);
        let a = m.advance(s(100));
        assert_eq!(
            kinds(&a),
            [(10, ActionKind::Probe { deadline: s(12) }), (12, ActionKind::Reschedule { scope: Scope::SingleReplica })],
            "no probe answer means still down, even after a supervisor report"
        );
        assert_eq!(m.phase("h"), Some(Phase::FailedOver));
        assert_eq!(m.next_deadline(), None);
    }

    #[test]
    fn recovery_after_failover_moves_nothing_back() {
        let mut m = FailureMonitor::default();
        m.handle(s(0), "h", HostEvent::HostDown);
        m.advance(s(50));
        let a = m.handle(s(60), "h", HostEvent::HostUp);
        assert_eq!(kinds(&a), [(60, ActionKind::Recovered)]);
        assert_eq!(m.phase("h"), Some(Phase::Healthy));
    }

    #[test]
    fn time_never_goes_back_and_repeated_reports_do_not_restart_the_wait() {
        let mut m = FailureMonitor::default();
        m.handle(s(10), "h", HostEvent::HostDown);
        let a = m.handle(s(5), "h", HostEvent::HostDown);
        assert!(a.is_empty());
        assert_eq!(m.now(), s(10));
        assert_eq!(m.next_deadline(), Some(s(40)));
    }

    #[test]
    fn probe_answer_concludes_the_check() {
        let mut m = FailureMonitor::default();
        m.handle(s(0), "h", HostEvent::HostDown);
        m.advance(s(30));
        let a = m.handle(s(31), "h", HostEvent::ProbeResult { host_up: true, supd_running: true });
        assert_eq!(kinds(&a), [(31, ActionKind::Recovered)]);
        m.handle(s(40), "h", HostEvent::HostDown);
        m.advance(s(70));
        let a = m.handle(s(71), "h", HostEvent::ProbeResult { host_up: false, supd_running: false });
        assert_eq!(kinds(&a), [(71, ActionKind::Reschedule { scope: Scope::SingleReplica })]);
    }

    #[test]
    fn timers_fire_in_time_then_name_order() {
        let mut m = FailureMonitor::default();
        m.handle(s(0), "b", HostEvent::HostDown);
        m.handle(s(0), "a", HostEvent::HostDown);
        let a = m.advance(s(30));
        let hosts: Vec<&str> = a.iter().map(|a| a.host.as_str()).collect();
        assert_eq!(hosts, ["a", "b"]);
    }
}
