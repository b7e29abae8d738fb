//! Which system wrote the input, and the dispatch to that system's answers.

use crate::answer::{Answer, CliError};
use crate::{load, longhorn, openstack, own, swarm, Ask};
use placewise::import::{Document, ImportError};
use std::fmt;
use std::path::PathBuf;

/// The systems whose objects the command line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum System {
    /// Longhorn's custom resources (`kubectl get … -o yaml|json`).
    Longhorn,
    /// `docker node|service inspect` and `docker inspect` of tasks.
    Swarm,
    /// The OpenStack Placement and Nova APIs' JSON.
    OpenStack,
    /// placewise's own snapshot JSON.
    Placewise,
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            System::Longhorn => "Longhorn",
            System::Swarm => "Docker Swarm",
            System::OpenStack => "OpenStack",
            System::Placewise => "placewise snapshot",
        })
    }
}

/// Which system wrote one document, if any.
fn system_of(doc: &Document) -> Option<System> {
    if longhorn::recognises(&doc.value) {
        Some(System::Longhorn)
    } else if swarm::recognises(&doc.value) {
        Some(System::Swarm)
    } else if openstack::recognises(&doc.value) {
        Some(System::OpenStack)
    } else if own::recognises(&doc.value) {
        Some(System::Placewise)
    } else {
        None
    }
}

/// The input, read and recognised.
#[derive(Debug)]
pub(crate) struct Input {
    /// Who wrote it.
    pub(crate) system: System,
    /// The documents, in the order read.
    pub(crate) docs: Vec<Document>,
}

/// Reads the paths and decides the system: every document must be one system's.
pub(crate) fn read(paths: &[PathBuf]) -> Result<Input, CliError> {
    let docs = load::load(paths)?;
    let mut found: Option<(System, &str)> = None;
    for doc in &docs {
        let Some(system) = system_of(doc) else {
            return Err(ImportError::UnknownKind {
                origin: doc.origin.clone(),
                kind: describe(&doc.value),
                expected: vec![
                    "Longhorn custom resources (longhorn.io/v1beta1, v1beta2)".into(),
                    "docker node/service/task inspect arrays".into(),
                    "OpenStack Placement or Nova API responses".into(),
                    "a placewise snapshot".into(),
                ],
            }
            .into());
        };
        match found {
            None => found = Some((system, &doc.origin)),
            Some((first, origin)) if first != system => {
                return Err(CliError::Usage(format!(
                    "the input mixes {first} ({origin}) and {system} ({}) objects",
                    doc.origin
                )))
            }
            Some(_) => {}
        }
    }
    let Some((system, _)) = found else {
        return Err(CliError::Usage("no documents in the input".into()));
    };
    Ok(Input { system, docs })
}

/// A short description of an unrecognised document's shape.
fn describe(value: &serde_json::Value) -> String {
    let first = placewise::import::items(value).first().unwrap_or(value);
    match (first.get("apiVersion").and_then(|v| v.as_str()), first.get("kind").and_then(|v| v.as_str())) {
        (Some(api), Some(kind)) => format!("{api}/{kind}"),
        (None, Some(kind)) => kind.to_owned(),
        _ => match first {
            serde_json::Value::Object(map) => {
                let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
                format!("an object with keys {}", keys.join(", "))
            }
            other => format!("a JSON {}", kind_of(other)),
        },
    }
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

impl Input {
    /// `inspect`.
    pub(crate) fn inspect(&self) -> Result<Answer, CliError> {
        match self.system {
            System::Longhorn => longhorn::inspect(&self.docs),
            System::Swarm => swarm::inspect(&self.docs),
            System::OpenStack => openstack::inspect(&self.docs),
            System::Placewise => own::inspect(&self.docs),
        }
    }

    /// `place`.
    pub(crate) fn place(&self, ask: &Ask) -> Result<Answer, CliError> {
        match self.system {
            System::Longhorn => longhorn::place(&self.docs, ask),
            System::Swarm => swarm::place(&self.docs, ask),
            System::OpenStack => openstack::place(&self.docs, ask),
            System::Placewise => Err(own::no_request()),
        }
    }

    /// `explain`.
    pub(crate) fn explain(&self, ask: &Ask) -> Result<Answer, CliError> {
        match self.system {
            System::Longhorn => longhorn::explain(&self.docs, ask),
            System::Swarm => swarm::explain(&self.docs, ask),
            System::OpenStack => openstack::explain(&self.docs, ask),
            System::Placewise => Err(own::no_request()),
        }
    }

    /// `capacity`.
    pub(crate) fn capacity(&self, ask: &Ask) -> Result<Answer, CliError> {
        match self.system {
            System::Longhorn => longhorn::capacity(&self.docs, ask),
            System::Swarm => swarm::capacity(&self.docs, ask),
            System::OpenStack => openstack::capacity(&self.docs, ask),
            System::Placewise => Err(own::no_request()),
        }
    }
}
