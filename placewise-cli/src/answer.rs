//! What a subcommand gives back, and what goes wrong.

use placewise::explain::HostVerdict;
use placewise::import::ImportError;
use std::fmt::Write;
use std::path::PathBuf;

/// A subcommand's answer: the text for people, the JSON for machines, and what `inspect
/// --write-snapshot` and `capacity --svg` write.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// Printed without `--json`.
    pub(crate) text: String,
    /// Printed with `--json`.
    pub(crate) json: serde_json::Value,
    /// placewise's own snapshot JSON (`inspect`).
    pub(crate) snapshot: Option<String>,
    /// A chart (`capacity`).
    pub(crate) svg: Option<String>,
}

impl Answer {
    /// Prints the answer to standard output.
    pub(crate) fn print(&self, json: bool) {
        if json {
            println!("{}", serde_json::to_string_pretty(&self.json).unwrap_or_default());
        } else {
            print!("{}", self.text);
            if !self.text.ends_with('\n') {
                println!();
            }
        }
    }
}

/// Why a subcommand gave no answer. Every variant is bad input (exit status 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid YAML.
    #[error("{origin}: not valid YAML: {message}")]
    Yaml { origin: String, message: String },
    /// The objects could not be imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The command line asks for something the input cannot answer.
    #[error("{0}")]
    Usage(String),
    /// An output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One line per verdict, indented by `indent`: `host[ disk d]: passed`, or `rejected by` the rule that
/// rejected it, and every reason it gave.
pub(crate) fn verdict_lines(text: &mut String, indent: &str, verdicts: &[HostVerdict]) {
    for v in verdicts {
        let what = match &v.disk {
            Some(d) => format!("{} disk {d}", v.host),
            None => v.host.clone(),
        };
        if v.passed {
            let _ = writeln!(text, "{indent}{what}: passed");
        } else {
            let reasons =
                if v.reasons.is_empty() { v.reason.clone().unwrap_or_default() } else { v.reasons.join("; ") };
            let rule = v.filter.as_deref().unwrap_or("the request's host lists");
            let _ = writeln!(text, "{indent}{what}: rejected by {rule}: {reasons}");
        }
    }
}
