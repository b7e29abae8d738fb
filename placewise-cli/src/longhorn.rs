//! The command line's answers on longhorn objects (owned by the longhorn importer's author).

use crate::answer::{Answer, CliError};
use crate::Ask;
use placewise::import::Document;

/// Whether a document is longhorn's.
pub(crate) fn recognises(_value: &serde_json::Value) -> bool {
    false
}

/// `inspect`: what was read. `Answer::snapshot` holds placewise's own snapshot JSON.
pub(crate) fn inspect(_docs: &[Document]) -> Result<Answer, CliError> {
    Err(CliError::Usage("not yet".into()))
}

/// `place`.
pub(crate) fn place(_docs: &[Document], _ask: &Ask) -> Result<Answer, CliError> {
    Err(CliError::Usage("not yet".into()))
}

/// `explain`.
pub(crate) fn explain(_docs: &[Document], _ask: &Ask) -> Result<Answer, CliError> {
    Err(CliError::Usage("not yet".into()))
}

/// `capacity`; `Answer::svg` holds the chart.
pub(crate) fn capacity(_docs: &[Document], _ask: &Ask) -> Result<Answer, CliError> {
    Err(CliError::Usage("not yet".into()))
}
