//! File rules: paths given to file APIs, checked against the rules file's read and write roots.
//!
//! This module owns what the four rules share: which calls take a path and whether they read or write
//! it, and how much of the path the checker can compute (literals, variables bound to literals, joins,
//! f-string prefixes). It then hands each path to the rule it concerns: a URL to FILE703
//! (`url_access`), a path outside the roots to FILE701/FILE702 (`path_not_readable`,
//! `path_not_writable`, which own their roots), a path it cannot compute to FILE704 (`dynamic_path`).
//!
//! The jail enforces the same roots with Landlock whatever the checker concludes; these rules exist to
//! tell the model early, and precisely, which path it may not use.

pub(crate) mod dynamic_path;
pub(crate) mod path_not_readable;
pub(crate) mod path_not_writable;
pub(crate) mod url_access;

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast::{self, Expr, Operator};
use crate::paths;
use crate::semantic::QualName;
use crate::settings::WORKDIR;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

/// Functions that open a path with a mode argument.
const OPENERS: &[&str] = &[
    "builtins.open",
    "io.open",
    "codecs.open",
    "gzip.open",
    "bz2.open",
    "lzma.open",
    "tarfile.open",
    "tarfile.TarFile",
    "zipfile.ZipFile",
];

/// Functions that read the path in their first argument (prefix `pandas.read_` covers every pandas reader).
const READERS: &[&str] = &[
    "numpy.loadtxt",
    "numpy.genfromtxt",
    "numpy.fromfile",
    "numpy.fromregex",
    "numpy.load",
    "numpy.memmap",
    "linecache.getline",
    "linecache.getlines",
    "linecache.updatecache",
    "fileinput.input",
    "matplotlib.pyplot.imread",
    "matplotlib.image.imread",
    "scipy.io.loadmat",
    "scipy.io.mmread",
    "scipy.io.wavfile.read",
    "pandas.ExcelFile",
    "pandas.HDFStore",
    "pathlib.Path",
    "pathlib.PurePath",
    "pathlib.PosixPath",
    "os.path.getsize",
    "os.path.exists",
    "os.path.isfile",
    "os.path.isdir",
    // The packages the default runtime added (issue 12): readers that take a path (or a URL) first.
    "pyarrow.parquet.read_table",
    "pyarrow.parquet.read_pandas",
    "pyarrow.parquet.read_metadata",
    "pyarrow.parquet.read_schema",
    "pyarrow.parquet.ParquetFile",
    "pyarrow.parquet.ParquetDataset",
    "pyarrow.csv.read_csv",
    "pyarrow.csv.open_csv",
    "pyarrow.json.read_json",
    "pyarrow.feather.read_table",
    "pyarrow.feather.read_feather",
    "pyarrow.orc.read_table",
    "pyarrow.orc.ORCFile",
    "pyarrow.dataset.dataset",
    "pyarrow.memory_map",
    "pyarrow.OSFile",
    "pyarrow.input_stream",
    "openpyxl.load_workbook",
    "xlrd.open_workbook",
    "networkx.read_edgelist",
    "networkx.read_weighted_edgelist",
    "networkx.read_adjlist",
    "networkx.read_multiline_adjlist",
    "networkx.read_graphml",
    "networkx.read_gexf",
    "networkx.read_gml",
    "networkx.read_pajek",
    "plotly.io.read_json",
    "xgboost.DMatrix",
    "lightgbm.Dataset",
    // Allowed by the default policy since issue 26.
    "glob.glob",
    "glob.iglob",
    "PIL.Image.open",
    "tarfile.is_tarfile",
    "zipfile.is_zipfile",
    "zipfile.Path",
];

/// Functions that write the path in their first argument.
const WRITERS: &[&str] = &[
    "numpy.save",
    "numpy.savetxt",
    "numpy.savez",
    "numpy.savez_compressed",
    "matplotlib.pyplot.savefig",
    "scipy.io.savemat",
    "scipy.io.mmwrite",
    "scipy.io.wavfile.write",
    "pandas.ExcelWriter",
    // SQLite reads and writes the database file it opens (`:memory:` is a relative name: allowed).
    "sqlite3.connect",
];

use Access::{Read, Write};

/// A path parameter: its position, its keyword, and what the function does to the path.
type Parameter = (usize, &'static str, Access);

/// Functions that take paths beyond a first argument read or written: each parameter by position
/// and keyword, with what the function does to it. A copy reads its source and writes its
/// destination; a move, a removal or a link writes both ends (the file moved or removed is gone
/// from where it was); `tempfile`'s `dir` is where it creates its file or directory.
const PATH_PARAMETERS: &[(&str, &[Parameter])] = &[
    ("shutil.copy", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.copy2", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.copyfile", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.copymode", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.copystat", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.copytree", &[(0, "src", Read), (1, "dst", Write)]),
    ("shutil.move", &[(0, "src", Write), (1, "dst", Write)]),
    ("shutil.rmtree", &[(0, "path", Write)]),
    ("shutil.chown", &[(0, "path", Write)]),
    (
        "shutil.make_archive",
        &[(0, "base_name", Write), (2, "root_dir", Read)],
    ),
    (
        "shutil.unpack_archive",
        &[(0, "filename", Read), (1, "extract_dir", Write)],
    ),
    ("tempfile.mkstemp", &[(2, "dir", Write)]),
    ("tempfile.mkdtemp", &[(2, "dir", Write)]),
    ("tempfile.TemporaryDirectory", &[(2, "dir", Write)]),
    ("tempfile.NamedTemporaryFile", &[(6, "dir", Write)]),
    ("tempfile.TemporaryFile", &[(6, "dir", Write)]),
    ("tempfile.SpooledTemporaryFile", &[(7, "dir", Write)]),
    ("os.remove", &[(0, "path", Write)]),
    ("os.unlink", &[(0, "path", Write)]),
    ("os.rmdir", &[(0, "path", Write)]),
    ("os.mkdir", &[(0, "path", Write)]),
    ("os.makedirs", &[(0, "name", Write)]),
    ("os.rename", &[(0, "src", Write), (1, "dst", Write)]),
    ("os.replace", &[(0, "src", Write), (1, "dst", Write)]),
    ("os.chdir", &[(0, "path", Read)]),
    ("os.listdir", &[(0, "path", Read)]),
    ("os.scandir", &[(0, "path", Read)]),
    ("os.walk", &[(0, "top", Read)]),
];

/// Methods (any receiver) whose first argument is a path they write.
const WRITER_METHODS: &[&str] = &[
    "to_csv",
    "to_json",
    "to_excel",
    "to_parquet",
    "to_feather",
    "to_hdf",
    "to_html",
    "to_stata",
    "to_xml",
    "to_latex",
    "to_markdown",
    "to_orc",
    "savefig",
    "tofile",
    "extractall",
    // openpyxl/PIL `save`, plotly figures, xgboost/lightgbm models.
    "save",
    "write_html",
    "write_json",
    "write_image",
    "save_model",
];

/// `pathlib.Path` methods that write the receiver's path.
const PATH_WRITE_METHODS: &[&str] = &[
    "write_text",
    "write_bytes",
    "touch",
    "mkdir",
    "unlink",
    "rmdir",
    "rename",
    "replace",
    "symlink_to",
    "hardlink_to",
    "chmod",
];

/// Keyword names under which APIs take their path.
const PATH_KEYWORDS: &[&str] = &[
    "file",
    "filename",
    "fname",
    "path",
    "path_or_buf",
    "filepath_or_buffer",
    "excel_writer",
    "io",
];

pub(crate) fn check_call<'a>(
    checker: &mut Checker<'a>,
    call: &'a ast::ExprCall,
    callee: &[QualName],
) {
    for name in callee {
        let path = name.path.as_str();
        if OPENERS.contains(&path) {
            let access = open_mode(checker, call);
            if let Some(argument) = path_argument(call) {
                check_path(checker, argument, access, path);
            }
        } else if READERS.contains(&path) || path.starts_with("pandas.read_") {
            if let Some(argument) = path_argument(call) {
                check_path(checker, argument, Access::Read, path);
            }
        } else if WRITERS.contains(&path) {
            if let Some(argument) = path_argument(call) {
                check_path(checker, argument, Access::Write, path);
            }
        } else if let Some((_, parameters)) = PATH_PARAMETERS.iter().find(|(f, _)| *f == path) {
            for (position, keyword, access) in *parameters {
                if let Some(argument) = parameter(call, *position, keyword) {
                    check_path(checker, argument, *access, path);
                }
            }
        }
    }
    let Expr::Attribute(attribute) = call.func.as_ref() else {
        return;
    };
    let method = attribute.attr.id.as_str();
    if WRITER_METHODS.contains(&method) {
        if let Some(argument) = path_argument(call) {
            check_path(checker, argument, Access::Write, method);
        }
    } else if method == "extract" {
        // `TarFile.extract(member, path)`, `ZipFile.extract(member, path)`: the directory written
        // into. Any receiver has the method (`Series.str.extract(pat, flags)`), so only a path
        // the checker computes is judged; a computed one is left to the runtime layer.
        if let Some(argument) = parameter(call, 1, "path") {
            if !matches!(static_path(checker, argument, 0), PathValue::Unknown) {
                check_path(checker, argument, Access::Write, method);
            }
        }
    } else if PATH_WRITE_METHODS.contains(&method) && is_path_constructor(checker, &attribute.value)
    {
        check_path(checker, &attribute.value, Access::Write, method);
    }
}

fn is_path_constructor<'a>(checker: &Checker<'a>, expr: &'a Expr) -> bool {
    let Expr::Call(call) = expr else { return false };
    let (Expr::Attribute(_) | Expr::Name(_)) = call.func.as_ref() else {
        return false;
    };
    checker_resolves_to(
        checker,
        &call.func,
        &["pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"],
    )
}

fn checker_resolves_to<'a>(checker: &Checker<'a>, expr: &'a Expr, targets: &[&str]) -> bool {
    checker
        .resolve(expr)
        .iter()
        .any(|q| targets.contains(&q.path.as_str()))
}

fn path_argument(call: &ast::ExprCall) -> Option<&Expr> {
    call.arguments
        .args
        .first()
        .filter(|a| !matches!(a, Expr::Starred(_)))
        .or_else(|| {
            call.arguments
                .keywords
                .iter()
                .find(|k| {
                    k.arg
                        .as_ref()
                        .is_some_and(|a| PATH_KEYWORDS.contains(&a.id.as_str()))
                })
                .map(|k| &k.value)
        })
}

/// The argument at `position` (none when a starred argument comes first: its place is unknown) or
/// under `keyword`.
fn parameter<'a>(call: &'a ast::ExprCall, position: usize, keyword: &str) -> Option<&'a Expr> {
    let args = &call.arguments.args;
    let positional = args
        .iter()
        .take(position + 1)
        .all(|a| !matches!(a, Expr::Starred(_)))
        .then(|| args.get(position))
        .flatten();
    positional.or_else(|| call.arguments.find_keyword(keyword).map(|k| &k.value))
}

fn open_mode(checker: &Checker<'_>, call: &ast::ExprCall) -> Access {
    let mode = call
        .arguments
        .args
        .get(1)
        .or_else(|| call.arguments.find_keyword("mode").map(|k| &k.value));
    let Some(mode) = mode else {
        return Access::Read;
    };
    match checker.literal_strings(mode) {
        Some(modes) if modes.iter().all(|m| !m.contains(['w', 'a', 'x', '+'])) => Access::Read,
        _ => Access::Write,
    }
}

/// What the checker knows of a path expression.
enum PathValue {
    Known(Vec<String>),
    /// The text starts with this literal; the rest is computed.
    Prefix(String),
    Unknown,
}

fn static_path<'a>(checker: &Checker<'a>, expr: &'a Expr, depth: usize) -> PathValue {
    if depth > 8 {
        return PathValue::Unknown;
    }
    if let Some(literals) = checker.literal_strings(expr) {
        return PathValue::Known(literals);
    }
    match expr {
        Expr::FString(fstring) => {
            let mut prefix = String::new();
            for part in fstring.value.iter() {
                match part {
                    ast::FStringPart::Literal(literal) => prefix.push_str(&literal.value),
                    ast::FStringPart::FString(f) => {
                        for element in f.elements.iter() {
                            match element {
                                ast::InterpolatedStringElement::Literal(literal) => {
                                    prefix.push_str(&literal.value)
                                }
                                ast::InterpolatedStringElement::Interpolation(_) => {
                                    return PathValue::Prefix(prefix);
                                }
                            }
                        }
                    }
                }
            }
            PathValue::Known(vec![prefix])
        }
        Expr::BinOp(binop) if matches!(binop.op, Operator::Div | Operator::Add) => {
            let separator = if binop.op == Operator::Div { "/" } else { "" };
            join(
                static_path(checker, &binop.left, depth + 1),
                static_path(checker, &binop.right, depth + 1),
                separator,
            )
        }
        Expr::Call(call)
            if checker_resolves_to(
                checker,
                &call.func,
                &[
                    "pathlib.Path",
                    "pathlib.PurePath",
                    "pathlib.PosixPath",
                    "os.path.join",
                ],
            ) =>
        {
            let mut value = PathValue::Known(vec![String::new()]);
            for (index, argument) in call.arguments.args.iter().enumerate() {
                let separator = if index == 0 { "" } else { "/" };
                value = join(value, static_path(checker, argument, depth + 1), separator);
            }
            value
        }
        _ => PathValue::Unknown,
    }
}

fn join(left: PathValue, right: PathValue, separator: &str) -> PathValue {
    match (left, right) {
        (PathValue::Known(lefts), PathValue::Known(rights)) => {
            let mut out = Vec::new();
            for l in &lefts {
                for r in &rights {
                    // An absolute right side replaces the left, as pathlib and os.path.join do.
                    if (separator == "/" && r.starts_with('/')) || l.is_empty() {
                        out.push(r.clone());
                    } else {
                        out.push(format!("{l}{separator}{r}"));
                    }
                }
            }
            PathValue::Known(out)
        }
        (PathValue::Known(lefts), _) => match lefts.into_iter().next() {
            Some(l) if !l.is_empty() => PathValue::Prefix(format!("{l}{separator}")),
            _ => PathValue::Unknown,
        },
        (prefix @ PathValue::Prefix(_), _) => prefix,
        (PathValue::Unknown, _) => PathValue::Unknown,
    }
}

fn check_path<'a>(checker: &mut Checker<'a>, expr: &'a Expr, access: Access, api: &str) {
    let range = expr.range();
    match static_path(checker, expr, 0) {
        PathValue::Known(paths) => {
            for path in paths {
                check_literal(checker, &path, false, access, api, range);
            }
        }
        PathValue::Prefix(prefix) => check_literal(checker, &prefix, true, access, api, range),
        PathValue::Unknown => {
            let hint = access_roots_hint(checker, access);
            dynamic_path::report(checker, api, hint, range);
        }
    }
}

fn check_literal(
    checker: &mut Checker<'_>,
    text: &str,
    partial: bool,
    access: Access,
    api: &str,
    range: TextRange,
) {
    if url_access::check(checker, text, api, range) {
        return;
    }
    if text.is_empty() {
        if partial {
            let hint = access_roots_hint(checker, access);
            dynamic_path::report(checker, api, hint, range);
        }
        return;
    }
    let shown = if partial {
        format!("{text}…")
    } else {
        text.to_owned()
    };
    if text.starts_with('~') {
        report_outside(checker, &shown, access, api, range);
        return;
    }
    // For a partial path only the directory part is known.
    let known = if partial {
        text.rsplit_once('/').map_or("", |(dir, _)| dir)
    } else {
        text
    };
    if partial && !known.starts_with('/') && !known.contains("..") {
        // Relative and not climbing: inside the work dir whatever follows (the jail checks the rest),
        // which must be a root for this access (`[files] write = []` writes nowhere).
        let work_dir_is_a_root = access_roots(checker.policy, access)
            .iter()
            .any(|root| paths::is_within(WORKDIR, root));
        if !work_dir_is_a_root {
            report_outside(checker, &shown, access, api, range);
        } else if known.is_empty() {
            let hint = access_roots_hint(checker, access);
            dynamic_path::report(checker, api, hint, range);
        }
        return;
    }
    let absolute = if known.starts_with('/') {
        known.to_owned()
    } else {
        format!("{WORKDIR}/{known}")
    };
    let roots = access_roots(checker.policy, access);
    // A partial path is inside when what follows may still land in a root (`/tm…` for `/tmp`).
    let inside = paths::normalize(&absolute).is_some_and(|normal| {
        roots.iter().any(|root| paths::is_within(&normal, root))
            || (partial
                && roots
                    .iter()
                    .any(|root| paths::is_within(root, &normal) && normal != "/"))
    });
    if !inside {
        report_outside(checker, &shown, access, api, range);
    }
}

fn report_outside(
    checker: &mut Checker<'_>,
    shown: &str,
    access: Access,
    api: &str,
    range: TextRange,
) {
    match access {
        Access::Read => path_not_readable::report(checker, shown, api, range),
        Access::Write => path_not_writable::report(checker, shown, api, range),
    }
}

/// The roots of one kind of access.
fn access_roots(policy: &crate::settings::Policy, access: Access) -> Vec<&str> {
    match access {
        Access::Read => path_not_readable::roots(policy),
        Access::Write => path_not_writable::roots(policy),
    }
}

/// The hint naming where this policy lets the program read or write.
fn access_roots_hint(checker: &Checker<'_>, access: Access) -> String {
    let verb = match access {
        Access::Read => "read",
        Access::Write => "write",
    };
    roots_hint(verb, &access_roots(checker.policy, access))
}

/// The hint listing the roots a program may `verb` (read or write), or saying there are none.
fn roots_hint(verb: &str, roots: &[&str]) -> String {
    if roots.is_empty() {
        return match verb {
            "write" => {
                "this policy lets the program write no files: print the results to standard output"
                    .to_owned()
            }
            _ => format!("this policy lets the program {verb} no files"),
        };
    }
    format!(
        "this policy lets the program {verb} only inside {} (relative paths are inside the work dir {WORKDIR}); input files are in the work dir",
        roots.join(", ")
    )
}
