//! Files and directories in, parsed documents out.

use crate::answer::CliError;
use placewise::import::Document;
use std::path::{Path, PathBuf};

/// Reads every path: a file as JSON or YAML (by its extension, else by its first character), a
/// directory recursively (its `.json`, `.yaml` and `.yml` files, in name order; hidden entries
/// skipped). A YAML stream gives one document per `---` part; empty parts are skipped.
pub(crate) fn load(paths: &[PathBuf]) -> Result<Vec<Document>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, true, &mut files)?;
    }
    let mut docs = Vec::new();
    for file in &files {
        read_file(file, &mut docs)?;
    }
    Ok(docs)
}

fn collect(path: &Path, named: bool, files: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let read_err = |source| CliError::Read { path: path.to_owned(), source };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if !meta.is_dir() {
        if named || has_data_extension(path) {
            files.push(path.to_owned());
        }
        return Ok(());
    }
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        if !entry.file_name().to_string_lossy().starts_with('.') {
            entries.push(entry.path());
        }
    }
    entries.sort();
    for entry in entries {
        collect(&entry, false, files)?;
    }
    Ok(())
}

fn has_data_extension(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "yaml" | "yml"))
}

fn read_file(path: &Path, docs: &mut Vec<Document>) -> Result<(), CliError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read { path: path.to_owned(), source })?;
    let json = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("yaml" | "yml") => false,
        _ => text.trim_start().starts_with(['{', '[']),
    };
    if json {
        docs.push(Document::from_json(origin, &text)?);
        return Ok(());
    }
    parse_yaml(&origin, &text, docs)
}

/// Parses a YAML stream into `docs`, one document per non-empty part.
pub(crate) fn parse_yaml(origin: &str, text: &str, docs: &mut Vec<Document>) -> Result<(), CliError> {
    let values: Vec<serde_json::Value> = serde_saphyr::from_multiple(text)
        .map_err(|e| CliError::Yaml { origin: origin.to_owned(), message: e.to_string() })?;
    let several = values.len() > 1;
    for (i, value) in values.into_iter().enumerate() {
        let name = if several { format!("{origin} (document {})", i + 1) } else { origin.to_owned() };
        docs.push(Document::new(name, value));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yaml_stream_gives_one_document_per_part_and_names_each() {
        let mut docs = Vec::new();
        parse_yaml("a.yaml", "kind: A\n---\n---\nkind: B\nsize: \"10\"\n", &mut docs).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].origin, "a.yaml (document 1)");
        assert_eq!(docs[1].value["kind"], "B");
        assert_eq!(docs[1].value["size"], "10", "a quoted number stays a string");
    }

    #[test]
    fn bad_yaml_names_the_file() {
        let mut docs = Vec::new();
        let err = parse_yaml("b.yaml", "a: [1, 2\nb: }", &mut docs).unwrap_err().to_string();
        assert!(err.starts_with("b.yaml: not valid YAML: "), "{err}");
    }
}
