//! `str.format` templates and `operator.attrgetter`/`methodcaller` names are read as CPython reads them
//! (issue 13, point 3), and every attribute they reach is judged by the rules that judge attribute
//! nodes: dunders (ATTR301), frame attributes (ATTR303), `attributes.deny_names` (REX501) and banned
//! methods (REF202, for the getters). The grammar itself is tested against CPython in
//! `policy/src/rules/attributes/format_fields.rs`; here, that the checker judges what it yields.

use warden_policy::{Policy, Report, Rule};

fn check(program: &str) -> Report {
    let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"));
    warden_policy::check(program.as_bytes(), &policy)
}

fn summary(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|f| format!("{}:{} {}", f.rule.id(), f.span.line, f.message))
        .collect()
}

/// Each program must report its rule on its last line. Templates hold spaces, so the words of the
/// string (`string_words`, which skips text with whitespace) do not catch them by themselves.
const DENIED: &[(&str, Rule, &str)] = &[
    (
        "import random\nprint('a {0.__init__.__globals__} b'.format(random.Random()))\n",
        Rule::DunderAttribute,
        "attribute walk",
    ),
    (
        "import random\nprint('a {r.seed[x].__globals__} b'.format(r=random))\n",
        Rule::DunderAttribute,
        "nested `{a.b[c].d}`",
    ),
    (
        "d = {}\nprint('a {0[__globals__]} b'.format(d))\n",
        Rule::DunderAttribute,
        "a dunder index key `{0[__globals__]}`",
    ),
    (
        "x = 1\nprint('a {0.__class__.__base__!r} b'.format(x))\n",
        Rule::DunderAttribute,
        "conversion `!r` after the walk",
    ),
    (
        "x = 1\nprint('a {0!r:{1.__class__.__base__}} b'.format(x, x))\n",
        Rule::DunderAttribute,
        "a replacement field nested in the format spec",
    ),
    (
        "x = 1\nprint('a {0:>{1:{2.__subclasses__}}} b'.format(x, 3, x))\n",
        Rule::DunderAttribute,
        "a field nested two levels down",
    ),
    (
        "d = {}\nprint('a {0[x:y!z}].__globals__} b'.format(d))\n",
        Rule::DunderAttribute,
        "`:`, `!` and `}` inside an index do not end the field",
    ),
    (
        "g = (i for i in [1])\nprint('a {0.gi_frame} b'.format(g))\n",
        Rule::FrameAttribute,
        "a frame attribute",
    ),
    (
        "import random\nprint('a {0._os} b'.format(random))\n",
        Rule::ReexportedModule,
        "a denied attribute name (`attributes.deny_names`)",
    ),
    (
        "x = 1\nprint('a {0.__class__.__base__.__subclasses__} b'.format_map({'0': x}))\n",
        Rule::DunderAttribute,
        "format_map",
    ),
    (
        "import string\nimport random\nprint(string.Formatter().vformat('a {0.__init__.__globals__} b', [random.Random()], {}))\n",
        Rule::DunderAttribute,
        "string.Formatter().vformat",
    ),
    (
        "import string\nimport random\nprint(string.Formatter().get_field('0[a b].__init__.__globals__', [random.Random()], {}))\n",
        Rule::DunderAttribute,
        "Formatter().get_field of a field name with a space",
    ),
    (
        "import random\nprint(('{0.__init__.__glo' 'bals__} b').format(random.Random()))\n",
        Rule::DunderAttribute,
        "implicit concatenation",
    ),
    (
        "import random\nprint((f'{{0.__init__.__glo' 'bals__} b').format(random.Random()))\n",
        Rule::DunderAttribute,
        "an f-string and a plain string read as one template",
    ),
    (
        "import random\nname = input\nprint(f'{{0.{name}}} b'.format(random.Random()))\n",
        Rule::ComputedAttribute,
        "an f-string interpolation inside a field's attribute name",
    ),
    (
        "import random\nprint('LONG {0.__init__.__globals__} b'.format(random.Random()))\n",
        Rule::DunderAttribute,
        "a template longer than 4096 characters",
    ),
    (
        "import operator\nprint(operator.attrgetter('real', 'gi_frame.f_back')(1))\n",
        Rule::FrameAttribute,
        "attrgetter: every dotted argument",
    ),
    (
        "import operator\nimport pandas as pd\noperator.methodcaller('to_pickle', 'x.pkl')(pd.DataFrame())\n",
        Rule::BannedMethod,
        "methodcaller with a banned method name",
    ),
    (
        "import operator\nimport pandas as pd\nprint(operator.attrgetter('values.to_pickle')(pd.DataFrame()))\n",
        Rule::BannedMethod,
        "attrgetter with a banned method name in a dotted path",
    ),
];

#[test]
fn format_templates_and_getter_names_are_judged_as_attributes() {
    let mut failures = Vec::new();
    for (program, rule, what) in DENIED {
        let program = program.replace("LONG", &"x".repeat(5000));
        let report = check(&program);
        let last = program.lines().count();
        if !report
            .findings
            .iter()
            .any(|f| f.rule == *rule && f.span.line == last)
        {
            failures.push(format!(
                "{what}: expected {rule} on line {last}, got {:?}",
                summary(&report)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Ordinary templates and strings with braces: nothing to report.
const ALLOWED: &[&str] = &[
    "x = 3.14159\nprint('{:.2f} and {0:>10}'.format(x))\n",
    "print('{name:>10} {count:,} {0[1]} {0[key]}'.format({1: 2, 'key': 3}, name='a', count=3))\n",
    "digits = 3\nprint(f'{{:.{digits}f}}'.format(3.14159))\n",
    "print('{0.real} {0.imag!r:>{1}}'.format(3, 8))\n",
    "print('{{literal}} {{0.__mro__}}')\n",
    "import re\nprint(re.findall(r'\\d{2,3}', 'a 123'))\n",
    "import matplotlib\nlabel = r'$x^{2} + \\frac{a}{b}$'\n",
    "import json\nprint(json.loads('{\"a\": {\"b\": 1}}'))\n",
    "import operator\nprint(operator.attrgetter('real', 'imag')(1), operator.methodcaller('upper')('a'))\n",
];

#[test]
fn ordinary_templates_are_allowed() {
    let mut failures = Vec::new();
    for program in ALLOWED {
        let report = check(program);
        if !report.findings.is_empty() {
            failures.push(format!("{program}: {:?}", summary(&report)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Format specs nested far deeper than CPython follows: judged in bounded time and stack.
#[test]
fn deeply_nested_specs_are_bounded() {
    let depth = 200_000;
    let program = format!(
        "print('{}{}'.format(1))\n",
        "{0:".repeat(depth),
        "}".repeat(depth)
    );
    let report = check(&program);
    assert!(
        report.findings.iter().all(|f| f.rule != Rule::SourceLimits),
        "{:?}",
        summary(&report)
    );
}
