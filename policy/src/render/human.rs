//! Human output in the style of rustc and ruff: the rule, the message, a source snippet with carets and
//! the hint.

use std::fmt::Write;

use crate::finding::{Action, Finding};
use crate::Report;

/// Renders one program's report. `source` is the decoded text, when there is one.
pub fn render(path: &str, report: &Report, color: bool) -> String {
    let source = report.decoded.as_ref().map(|d| d.text.as_str());
    let mut out = String::new();
    for finding in &report.findings {
        finding_block(&mut out, path, source, finding, color);
    }
    let count = report.findings.len();
    let plural = if count == 1 { "" } else { "s" };
    let _ = writeln!(
        out,
        "{path}: {} ({count} finding{plural})",
        report.decision.as_str()
    );
    out
}

/// At most this many characters of a source line are shown.
const MAX_SHOWN: usize = 200;

/// A tab is shown as this many spaces (as rustc shows it), so that the carets below line up
/// whatever the terminal's tab stops.
const TAB_WIDTH: usize = 4;

/// A source line as shown, and where each of its characters starts on the screen: a tab takes
/// [`TAB_WIDTH`] cells, a wide character (CJK, most emoji) two, a combining mark none.
struct Shown {
    text: String,
    /// The cell each shown character starts at, then the cell after the last one.
    cells: Vec<usize>,
}

impl Shown {
    fn of(line: &str) -> Self {
        use unicode_width::UnicodeWidthChar;
        let mut text = String::new();
        let mut cells = vec![0];
        let mut at = 0;
        for c in line.chars().take(MAX_SHOWN) {
            let width = if c == '\t' {
                text.push_str(&" ".repeat(TAB_WIDTH));
                TAB_WIDTH
            } else if c.is_control() {
                // Shown as the replacement character: one cell, no terminal control.
                text.push('\u{FFFD}');
                1
            } else {
                text.push(c);
                c.width().unwrap_or(0)
            };
            at += width;
            cells.push(at);
        }
        Self { text, cells }
    }

    /// The screen cell of the character at 0-based `column` (past the end: the end).
    fn cell(&self, column: usize) -> usize {
        self.cells
            .get(column)
            .or(self.cells.last())
            .copied()
            .unwrap_or(0)
    }
}

fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

fn finding_block(
    out: &mut String,
    path: &str,
    source: Option<&str>,
    finding: &Finding,
    color: bool,
) {
    let (level, code) = match finding.action {
        Action::Deny => ("deny", "1;31"),
        Action::Review => ("review", "1;35"),
        Action::Warn => ("warning", "1;33"),
    };
    let header = format!("{level}[{}]", finding.rule.id());
    let _ = writeln!(
        out,
        "{}: {}",
        paint(&header, code, color),
        paint(&finding.message, "1", color)
    );
    let span = finding.span;
    let gutter = span.line.to_string().len();
    let pad = " ".repeat(gutter);
    let _ = writeln!(
        out,
        "{pad}{} {path}:{}:{}",
        paint("-->", "1;34", color),
        span.line,
        span.column
    );
    if let Some(line) = source.and_then(|s| s.lines().nth(span.line.saturating_sub(1))) {
        let shown = Shown::of(line);
        let bar = paint("|", "1;34", color);
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(
            out,
            "{} {bar} {}",
            paint(&span.line.to_string(), "1;34", color),
            shown.text
        );
        let start = span.column.saturating_sub(1);
        let end = if span.end_line == span.line {
            span.end_column.saturating_sub(1)
        } else {
            usize::MAX
        };
        let (from, to) = (shown.cell(start), shown.cell(end));
        let carets = format!(
            "{}{} {}",
            " ".repeat(from),
            "^".repeat(to.saturating_sub(from).max(1)),
            finding.name
        );
        let _ = writeln!(out, "{pad} {bar} {}", paint(&carets, code, color));
        let _ = writeln!(out, "{pad} {bar}");
    }
    let _ = writeln!(
        out,
        "{pad} = {} {}",
        paint("hint:", "1", color),
        finding.hint
    );
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::Shown;

    /// The carets' offset and width for a span of 0-based character columns.
    fn carets(line: &str, start: usize, end: usize) -> (usize, usize) {
        let shown = Shown::of(line);
        let (from, to) = (shown.cell(start), shown.cell(end));
        (from, to - from)
    }

    #[test]
    fn tabs_and_wide_characters_move_the_carets_by_their_cells() {
        // `\tx = 漢字 + eval(y)`: `eval` starts at character 10, after a tab (4 cells) and two
        // wide characters (2 cells each).
        let line = "\tx = 漢字 + eval(y)";
        let start = line.chars().position(|c| c == 'e').unwrap_or(0);
        assert_eq!(carets(line, start, start + 4), (4 + 4 + 4 + 3, 4));
        assert_eq!(Shown::of(line).text, "    x = 漢字 + eval(y)");
        // A span over wide characters is as wide as they are.
        assert_eq!(carets("s = '🙂🙂'", 4, 8), (4, 6));
        // A combining mark takes no cell.
        assert_eq!(carets("e\u{301}val(x)", 0, 5), (0, 4));
    }
}
