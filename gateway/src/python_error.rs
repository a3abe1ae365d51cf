//! The Python error a failed run raised, read from its standard error: `{name, value, traceback}`.

use serde::Serialize;

/// An uncaught Python exception.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PythonError {
    /// Exception class, e.g. `ZeroDivisionError` or `json.decoder.JSONDecodeError`.
    pub name: String,
    /// Its message (may be empty).
    pub value: String,
    /// The last traceback block, as printed.
    pub traceback: String,
    /// What warden knows about this error that the message does not say (e.g. that nltk's data is not
    /// installed and cannot be downloaded); absent when it knows nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// nltk raises `LookupError: Resource punkt_tab not found. Please use the NLTK Downloader…` for every
/// tokenizer, corpus and model that needs its data files.
pub const NLTK_DATA_HINT: &str = "nltk's data files (punkt, punkt_tab, stopwords, wordnet, vader_lexicon, taggers) are not \
installed in this runtime and cannot be downloaded: the jail has no network and no vetted package ships them. \
Use nltk tools that need no data (RegexpTokenizer, TreebankWordTokenizer, PorterStemmer, SnowballStemmer, ngrams, \
FreqDist), str.split or re, and a stopword list written in the program.";

/// A hint for errors warden can explain better than their message.
fn hint_for(name: &str, value: &str, traceback: &str) -> Option<String> {
    let nltk_data = name.ends_with("LookupError")
        && (value.contains("nltk") || value.contains("NLTK") || traceback.contains("/nltk/"));
    nltk_data.then(|| NLTK_DATA_HINT.to_owned())
}

/// Finds the last traceback in `stderr` and the exception it ends with: `Name: value`, where the value
/// runs to the end of the block, so a message of several lines (`ValueError("a\nb")`) is kept whole.
pub fn parse(stderr: &str) -> Option<PythonError> {
    let start = stderr.rfind("Traceback (most recent call last):")?;
    let block = stderr[start..].trim_end();
    let (name, value) =
        exception_at_first_unindented_line(block).or_else(|| exception_on_last_line(block))?;
    Some(PythonError {
        name: name.to_owned(),
        value: value.to_owned(),
        traceback: block.to_owned(),
        hint: hint_for(name, &value, block),
    })
}

/// The frames of a traceback are indented; the exception starts at the first line after the header
/// that is not, and its message is everything after `Name: ` to the end of the block.
fn exception_at_first_unindented_line(block: &str) -> Option<(&str, String)> {
    let mut offset = block.find('\n')? + 1;
    for line in block[offset..].split_inclusive('\n') {
        if !line.trim().is_empty() && !line.starts_with([' ', '\t']) {
            return split_exception(&block[offset..]);
        }
        offset += line.len();
    }
    None
}

/// The last unindented line alone, for blocks the first rule cannot read.
fn exception_on_last_line(block: &str) -> Option<(&str, String)> {
    let last = block
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty() && !line.starts_with(' '))?;
    split_exception(last)
}

fn split_exception(text: &str) -> Option<(&str, String)> {
    let first_line = text.lines().next()?;
    match text.split_once(": ") {
        Some((name, value)) if !name.contains('\n') && is_exception_name(name) => {
            Some((name, value.trim_end().to_owned()))
        }
        _ if is_exception_name(first_line.trim()) => Some((first_line.trim(), String::new())),
        _ => None,
    }
}

fn is_exception_name(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::parse;

    #[test]
    fn reads_the_last_exception() {
        let stderr = "warning: x\nTraceback (most recent call last):\n  File \"/run/warden/main.py\", line 3, in <module>\n    1/0\nZeroDivisionError: division by zero\n";
        let error = parse(stderr).expect("error");
        assert_eq!(error.name, "ZeroDivisionError");
        assert_eq!(error.value, "division by zero");
        assert!(error.traceback.starts_with("Traceback"));
    }

    #[test]
    fn a_message_of_several_lines_is_kept_whole() {
        let stderr = "Traceback (most recent call last):\n  File \"/run/warden/main.py\", line 1, in <module>\n    raise ValueError(\"a\\nb\")\nValueError: a\nb\n";
        let error = parse(stderr).expect("error");
        assert_eq!(error.name, "ValueError");
        assert_eq!(error.value, "a\nb");
        let indented = "Traceback (most recent call last):\n  File \"x\", line 2, in <module>\n    check(rows)\n  File \"x\", line 1, in check\n    raise KeyError(\"missing\")\nRuntimeError: rows failed:\n  row 1: no price\n  row 4: no qty\n";
        let error = parse(indented).expect("error");
        assert_eq!(error.name, "RuntimeError");
        assert_eq!(
            error.value,
            "rows failed:\n  row 1: no price\n  row 4: no qty"
        );
    }

    #[test]
    fn an_empty_first_line_and_a_chained_error() {
        let stderr = "Traceback (most recent call last):\n  File \"x\", line 1, in <module>\nValueError: \nsecond line\n";
        let error = parse(stderr).expect("error");
        assert_eq!(
            (error.name.as_str(), error.value.as_str()),
            ("ValueError", "\nsecond line")
        );
        let chained = "Traceback (most recent call last):\n  File \"x\", line 2\nKeyError: 'a'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"x\", line 4\nValueError: bad\nvalue\n";
        let error = parse(chained).expect("error");
        assert_eq!(
            (error.name.as_str(), error.value.as_str()),
            ("ValueError", "bad\nvalue")
        );
    }

    #[test]
    fn nltk_data_errors_get_a_hint_and_others_none() {
        let traceback = "Traceback (most recent call last):\n  File \"/v/site-packages/nltk/data.py\", line 1636, in find\n    raise exc\nLookupError: Resource 'punkt_tab' not found.";
        let hint = super::hint_for("LookupError", "Resource 'punkt_tab' not found.", traceback);
        assert_eq!(hint.as_deref(), Some(super::NLTK_DATA_HINT));
        assert_eq!(super::hint_for("KeyError", "'a'", "Traceback"), None);
        assert_eq!(
            super::hint_for("LookupError", "unknown encoding: x", "Traceback"),
            None
        );
    }

    #[test]
    fn qualified_names_and_empty_values() {
        let stderr = "Traceback (most recent call last):\n  File \"x\", line 1\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n";
        assert_eq!(
            parse(stderr).map(|e| e.name),
            Some("json.decoder.JSONDecodeError".to_owned())
        );
        let bare = "Traceback (most recent call last):\n  File \"x\", line 1\nKeyboardInterrupt\n";
        assert_eq!(
            parse(bare).map(|e| (e.name, e.value)),
            Some(("KeyboardInterrupt".to_owned(), String::new()))
        );
        assert_eq!(parse("no traceback here"), None);
    }
}
