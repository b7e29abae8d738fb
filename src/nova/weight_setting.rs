//! Nova's `[metrics] weight_setting` option: `name=ratio` entries for the MetricsWeigher.
//!
//! Each entry is split at its **first** `=`; the ratio is read with Python's `float()`
//! ([`parse_py_float`]). Nova ignores, with a warning, an entry that has no `=`, has nothing
//! before the `=`, or has a ratio `float()` rejects; the parsers here return those entries as
//! [`SettingProblem`]s so a caller can report them. Duplicates are kept (and count twice).
//!
//! As in Nova (`nova.scheduler.utils.parse_options`), the name is kept **as written**: it is not
//! stripped, so the entry `a = 1` names the metric `"a "`, which no host has, and `" =1"` is
//! accepted with the name `" "`. The ratio may carry whitespace, which `float()` ignores.
//! Given as one string, the option is first split like oslo.config's `ListOpt`: surrounding
//! whitespace and trailing commas removed, split at every comma, each entry stripped, so in
//! `a=1, b=2` the second name is `b`.
//!
//! ```
//! use placewise::nova::weight_setting::{parse_weight_setting, parse_weight_setting_str, ProblemKind};
//!
//! let (setting, problems) = parse_weight_setting(&["cpu.frequency=1.0", "cpu.percent", "x=-1.5"]);
//! assert_eq!(setting, [("cpu.frequency".to_string(), 1.0), ("x".to_string(), -1.5)]);
//! assert_eq!(problems[0].entry, "cpu.percent");
//! assert_eq!(problems[0].kind, ProblemKind::NoSeparator);
//!
//! let (setting, _) = parse_weight_setting_str("name1=1.0, name2=-1.3");
//! assert_eq!(setting, [("name1".to_string(), 1.0), ("name2".to_string(), -1.3)]);
//! ```

use super::pyvalue::{is_py_whitespace, parse_py_float, py_strip};
use std::fmt;

/// Why an entry is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The entry has no `=`.
    NoSeparator,
    /// Nothing comes before the first `=`.
    EmptyName,
    /// Python's `float()` rejects the text after the first `=`.
    BadRatio,
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProblemKind::NoSeparator => "it has no `=`",
            ProblemKind::EmptyName => "it has no name before `=`",
            ProblemKind::BadRatio => "its ratio is not a number",
        })
    }
}

/// An entry of `[metrics] weight_setting` that Nova ignores with a warning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct SettingProblem {
    /// The entry as Nova sees it (stripped, for the string form).
    pub entry: String,
    /// Its 0-based index among the entries.
    pub index: usize,
    /// Its byte offset in the option string, for [`parse_weight_setting_str`]; `None` for
    /// [`parse_weight_setting`].
    pub offset: Option<usize>,
    /// Why it is ignored.
    pub kind: ProblemKind,
}

impl fmt::Display for SettingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ignoring `[metrics] weight_setting` entry {} `{}`", self.index, self.entry)?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        write!(f, ": {}", self.kind)
    }
}

/// Parses the option given as a list of entries, as Nova's `parse_options(…, sep='=',
/// converter=float)` does. Returns the `(name, ratio)` pairs in order, duplicates included,
/// and the ignored entries. Computes in O(total length).
pub fn parse_weight_setting(items: &[&str]) -> (Vec<(String, f64)>, Vec<SettingProblem>) {
    parse_entries(items.iter().enumerate().map(|(index, &entry)| (index, None, entry)))
}

/// Parses the option given as one comma-separated string, split as oslo.config's `ListOpt`
/// splits it (see the [module docs](self)); an empty entry between two commas is a problem, as
/// in Nova. Computes in O(length of `value`).
pub fn parse_weight_setting_str(value: &str) -> (Vec<(String, f64)>, Vec<SettingProblem>) {
    let stripped = py_strip(value).trim_end_matches(',');
    if stripped.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let base = value.len() - value.trim_start_matches(is_py_whitespace).len();
    let mut start = 0;
    let entries = stripped.split(',').enumerate().map(move |(index, raw)| {
        let entry = py_strip(raw);
        let lead = raw.len() - raw.trim_start_matches(is_py_whitespace).len();
        let offset = base + start + lead;
        start += raw.len() + 1;
        (index, Some(offset), entry)
    });
    parse_entries(entries)
}

fn parse_entries<'a>(
    entries: impl Iterator<Item = (usize, Option<usize>, &'a str)>,
) -> (Vec<(String, f64)>, Vec<SettingProblem>) {
    let mut setting = Vec::new();
    let mut problems = Vec::new();
    for (index, offset, entry) in entries {
        let kind = match entry.split_once('=') {
            None => ProblemKind::NoSeparator,
            Some(("", _)) => ProblemKind::EmptyName,
            Some((name, ratio)) => match parse_py_float(ratio) {
                Some(ratio) => {
                    setting.push((name.to_owned(), ratio));
                    continue;
                }
                None => ProblemKind::BadRatio,
            },
        };
        problems.push(SettingProblem { entry: entry.to_owned(), index, offset, kind });
    }
    (setting, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pairs(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|&(n, r)| (n.to_owned(), r)).collect()
    }

    #[test]
    fn list_form_matches_nova() {
        // Checked against nova.scheduler.utils.parse_options in Nova 34.
        let (setting, problems) =
            parse_weight_setting(&[" =1", "=1", "a", "a=", "a= 5 ", "a=\u{1c}5", "b=1_0", "c=1=2", "a=2", "d=inf"]);
        assert_eq!(setting, pairs(&[(" ", 1.0), ("a", 5.0), ("b", 10.0), ("a", 2.0), ("d", f64::INFINITY)]));
        let got: Vec<_> = problems.iter().map(|p| (p.index, p.entry.as_str(), p.kind, p.offset)).collect();
        assert_eq!(
            got,
            [
                (1, "=1", ProblemKind::EmptyName, None),
                (2, "a", ProblemKind::NoSeparator, None),
                (3, "a=", ProblemKind::BadRatio, None),
                (5, "a=\u{1c}5", ProblemKind::BadRatio, None),
                (7, "c=1=2", ProblemKind::BadRatio, None),
            ]
        );
    }

    #[test]
    fn names_are_not_stripped() {
        let (setting, problems) = parse_weight_setting(&["a = 1", "\tb=2"]);
        assert_eq!(setting, pairs(&[("a ", 1.0), ("\tb", 2.0)]));
        assert!(problems.is_empty());
    }

    #[test]
    fn string_form_matches_oslo_list() {
        // oslo.config's List gives ['a = 1', 'b=2', '', 'c=x', '=3', 'd=4', 'e=1_0', 'f=1=2'].
        let text = "a = 1, b=2,,c=x, =3,\u{1c} d=4 ,e=1_0,f=1=2,,,";
        let (setting, problems) = parse_weight_setting_str(text);
        assert_eq!(setting, pairs(&[("a ", 1.0), ("b", 2.0), ("d", 4.0), ("e", 10.0)]));
        let got: Vec<_> = problems.iter().map(|p| (p.index, p.entry.as_str(), p.kind)).collect();
        assert_eq!(
            got,
            [
                (2, "", ProblemKind::NoSeparator),
                (3, "c=x", ProblemKind::BadRatio),
                (4, "=3", ProblemKind::EmptyName),
                (7, "f=1=2", ProblemKind::BadRatio),
            ]
        );
        for p in &problems {
            let offset = p.offset.unwrap_or(usize::MAX);
            assert!(text[offset..].starts_with(&p.entry), "{p}");
        }
        assert_eq!(problems[1].offset, Some(12));
        assert_eq!(
            problems[1].to_string(),
            "ignoring `[metrics] weight_setting` entry 3 `c=x` at byte 12: its ratio is not a number"
        );
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(parse_weight_setting(&[]), (vec![], vec![]));
        assert_eq!(parse_weight_setting_str(""), (vec![], vec![]));
        assert_eq!(parse_weight_setting_str(" ,,, "), (vec![], vec![]));
        // oslo.config gives ['', ''] for " , ,, ": only trailing commas are dropped.
        let (setting, problems) = parse_weight_setting_str(" , ,, ");
        assert!(setting.is_empty());
        assert_eq!(problems.iter().map(|p| (p.index, p.offset)).collect::<Vec<_>>(), [(0, Some(1)), (1, Some(3))]);
        let (setting, problems) = parse_weight_setting(&[""]);
        assert!(setting.is_empty());
        assert_eq!(problems[0].kind, ProblemKind::NoSeparator);
        assert_eq!(problems[0].to_string(), "ignoring `[metrics] weight_setting` entry 0 ``: it has no `=`");
    }

    #[test]
    fn duplicates_are_kept() {
        let (setting, _) = parse_weight_setting_str("m=1,m=1");
        assert_eq!(setting, pairs(&[("m", 1.0), ("m", 1.0)]));
    }

    proptest! {
        #[test]
        fn never_panics(text in any::<String>()) {
            let (setting, problems) = parse_weight_setting_str(&text);
            for p in &problems {
                let offset = p.offset.unwrap_or(usize::MAX);
                prop_assert!(text.get(offset..).is_some_and(|rest| rest.starts_with(&p.entry)));
            }
            let items: Vec<&str> = text.split(',').collect();
            let (setting2, problems2) = parse_weight_setting(&items);
            prop_assert!(setting.len() <= items.len() && setting2.len() + problems2.len() == items.len());
        }

        #[test]
        fn never_panics_on_entries(items in prop::collection::vec("[ a=._0-9\u{a0}\u{1c},-]{0,8}", 0..6)) {
            let refs: Vec<&str> = items.iter().map(String::as_str).collect();
            let (setting, problems) = parse_weight_setting(&refs);
            prop_assert_eq!(setting.len() + problems.len(), items.len());
            let _ = parse_weight_setting_str(&items.join(","));
        }
    }
}
