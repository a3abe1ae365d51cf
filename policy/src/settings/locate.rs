//! Where a key path (`imports.allow[3]`, `actions.NOPE1`, `imports.members.os.path`) is written in
//! a rules file: errors found after parsing are located by their key, as parse errors are by the
//! parser. Also sets a key aside in a parsed table, so that the rest of a file can be read again.

use toml_edit::{ImDocument, TableLike};

use super::{line_column, RulesError};

/// `error` and its others, each given the line and column of its key in `text` when it has none,
/// in the order they are written (errors with no place last).
pub(super) fn locate(error: RulesError, text: &str) -> RulesError {
    let Ok(document) = ImDocument::parse(text) else {
        return error;
    };
    let mut all: Vec<RulesError> = error
        .all()
        .map(|one| {
            let mut one = one.clone();
            one.more.clear();
            locate_one(&mut one, text, &document);
            one
        })
        .collect();
    all.sort_by_key(|one| (one.line.unwrap_or(usize::MAX), one.column.unwrap_or(0)));
    RulesError::combine(all).unwrap_or(error)
}

fn locate_one(error: &mut RulesError, text: &str, document: &ImDocument<&str>) {
    if error.line.is_some() {
        return;
    }
    let Some(key) = &error.key else { return };
    if let Some(offset) = offset_of(document.as_table(), key) {
        let (line, column) = line_column(text, offset);
        error.line = Some(line);
        error.column = Some(column);
    }
}

/// One step of a key path: a key, or an index into an array.
#[derive(Debug, PartialEq, Eq)]
enum Step<'k> {
    Key(&'k str),
    Index(usize),
}

/// `a.b[2].c` → `a`, `b`, `[2]`, `c`. Keys may hold dots (`os.path`): [`offset_of`] tries the
/// longest key a table has.
fn steps(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, indices) = part.split_once('[').map_or((part, ""), |(n, i)| (n, i));
        if !name.is_empty() {
            out.push(Step::Key(name));
        }
        for index in indices.split('[') {
            if let Ok(index) = index.trim_end_matches(']').parse() {
                out.push(Step::Index(index));
            }
        }
    }
    out
}

/// The byte offset where the setting at `path` is written (its key, or its array element).
fn offset_of(table: &dyn TableLike, path: &str) -> Option<usize> {
    let steps = steps(path);
    let mut table: &dyn TableLike = table;
    let mut at = 0;
    let mut offset = None;
    while at < steps.len() {
        let Step::Key(_) = steps[at] else {
            return offset;
        };
        // The longest run of keys that the table has as one key (`os.path`).
        let (consumed, key, item) = (at..steps.len())
            .rev()
            .filter_map(|end| {
                let keys: Option<Vec<&str>> = steps[at..=end]
                    .iter()
                    .map(|step| match step {
                        Step::Key(key) => Some(*key),
                        Step::Index(_) => None,
                    })
                    .collect();
                let joined = keys?.join(".");
                let (key, item) = table.get_key_value(&joined)?;
                Some((end + 1, key, item))
            })
            .next()?;
        offset = key.span().map(|span| span.start).or(offset);
        at = consumed;
        if let Some(Step::Index(index)) = steps.get(at) {
            // Arrays hold values here, never tables: an element ends the path.
            let element = item.as_array().and_then(|array| array.get(*index))?;
            return element.span().map(|span| span.start).or(offset);
        }
        match item.as_table_like() {
            Some(inner) => table = inner,
            None => return offset,
        }
    }
    offset
}

/// Removes the setting at `path` from `table` (a key, or an element of an array); false when there
/// is none.
pub(super) fn remove_key(table: &mut toml::Table, path: &str) -> bool {
    remove_in_table(table, &steps(path))
}

fn remove_in_table(table: &mut toml::Table, steps: &[Step<'_>]) -> bool {
    // The longest run of keys the table has as one key (`os.path`), as in `offset_of`.
    for end in (0..steps.len()).rev() {
        let keys: Option<Vec<&str>> = steps[..=end]
            .iter()
            .map(|step| match step {
                Step::Key(key) => Some(*key),
                Step::Index(_) => None,
            })
            .collect();
        let Some(keys) = keys else { continue };
        let joined = keys.join(".");
        if !table.contains_key(&joined) {
            continue;
        }
        let rest = &steps[end + 1..];
        if rest.is_empty() {
            return table.remove(&joined).is_some();
        }
        return table
            .get_mut(&joined)
            .is_some_and(|value| remove_in_value(value, rest));
    }
    false
}

fn remove_in_value(value: &mut toml::Value, steps: &[Step<'_>]) -> bool {
    match (value, steps) {
        (toml::Value::Table(table), _) => remove_in_table(table, steps),
        (toml::Value::Array(array), [Step::Index(index)]) if *index < array.len() => {
            array.remove(*index);
            true
        }
        (toml::Value::Array(array), [Step::Index(index), rest @ ..]) => array
            .get_mut(*index)
            .is_some_and(|value| remove_in_value(value, rest)),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_elements_are_found_where_written() {
        let text = "[policy]\nname = \"x\"\n[imports]\nallow = [\"a\", \"b..c\"]\n[imports.members]\n\"os.path\" = [\"join\"]\n[actions]\nNOPE1 = \"deny\"\n";
        let document = ImDocument::parse(text).unwrap();
        let table = document.as_table();
        let at = |path| offset_of(table, path).map(|o| line_column(text, o));
        assert_eq!(at("actions.NOPE1"), Some((8, 1)));
        assert_eq!(at("imports.allow[1]"), Some((4, 15)));
        assert_eq!(at("imports.members.os.path"), Some((6, 1)));
        assert_eq!(at("imports.nothing"), None);
    }

    #[test]
    fn a_key_is_set_aside() {
        let mut table: toml::Table = "[imports]\nalow = 1\nallow = [1, 2]\n".parse().unwrap();
        assert!(remove_key(&mut table, "imports.alow"));
        assert!(remove_key(&mut table, "imports.allow[0]"));
        assert!(!remove_key(&mut table, "imports.nothing"));
        assert_eq!(table.to_string(), "[imports]\nallow = [2]\n");
    }
}
