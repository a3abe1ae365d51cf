//! A name the program binds hides a builtin only where it certainly holds (issue 13, point 3): in a module
//! or class body, CPython falls back to the builtin whenever the name is unbound, so a binding that is
//! conditional, later than the use, or undone (`del`, the end of `except … as`, a nested scope's
//! `global` + `del`) leaves the builtin in play, and the use is judged as the builtin.

use warden_policy::{Policy, Report, Rule};

fn policy() -> Policy {
    Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"))
}

fn check(program: &str) -> Report {
    warden_policy::check(program.as_bytes(), &policy())
}

/// The rules reported on the line that contains `marker`.
fn rules_on(program: &str, marker: &str) -> Vec<Rule> {
    let line = program
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} in\n{program}"))
        + 1;
    check(program)
        .findings
        .iter()
        .filter(|f| f.span.line == line)
        .map(|f| f.rule)
        .collect()
}

/// Each program must report `rule` on the line marked `# <-`.
const BUILTIN_STILL_IN_PLAY: &[(&str, Rule, &str)] = &[
    (
        "def exec(s):\n    return s\ndel exec\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "a def, then del",
    ),
    (
        "exec = print\ndel exec\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "an assignment, then del",
    ),
    (
        "import math as exec\nx = 1\ndel x, exec\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "an import, then del in a tuple",
    ),
    (
        "def exec(s):\n    return s\nexec('user')  # <-\ndel [exec]\n",
        Rule::DynamicCode,
        "a del anywhere in the scope counts, also after the use (line 3)",
    ),
    (
        "import sys\nif len(sys.argv) > 5:\n    def eval(s):\n        return s\neval('1 + 1')  # <-\n",
        Rule::DynamicCode,
        "a def under if",
    ),
    (
        "try:\n    import math as compile\nexcept ImportError:\n    pass\ncompile('1', 'f', 'eval')  # <-\n",
        Rule::DynamicCode,
        "an import under try",
    ),
    (
        "for exec in [print]:\n    pass\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "a loop target",
    ),
    (
        "exec('import os')  # <-\ndef exec(s):\n    return s\n",
        Rule::DynamicCode,
        "bound only after the use",
    ),
    (
        "def run():\n    return exec('import os')  # <-\ndef exec(s):\n    return s\nrun()\n",
        Rule::DynamicCode,
        "a function written before the binding may run before it",
    ),
    (
        "def exec(s):\n    return s\ntry:\n    1 / 0\nexcept ZeroDivisionError as exec:\n    pass\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "`except … as exec` deletes exec when the handler ends",
    ),
    (
        "def exec(s):\n    return s\ndef forget():\n    global exec\n    del exec\nforget()\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "a function's global + del",
    ),
    (
        "def exec(s):\n    return s\ndef run():\n    exec('import os')  # <-\nclass K:\n    def forget(self):\n        global exec\n        del exec\nK().forget()\nrun()\n",
        Rule::DynamicCode,
        "a global + del in a scope written after the use",
    ),
    (
        "class K:\n    exec = print\n    del exec\n    exec('import os')  # <-\n",
        Rule::DynamicCode,
        "in a class body",
    ),
    (
        "class K:\n    import sys\n    if sys.argv:\n        exec = print\n    exec('import os')  # <-\n",
        Rule::DynamicCode,
        "a class body falls back to the module, then to the builtins",
    ),
    (
        "__import__ = print\ndel __import__\n__import__('os')  # <-\n",
        Rule::DynamicImport,
        "__import__",
    ),
    (
        "def getattr(o, n):\n    return o\ndel getattr\nname = input\ngetattr(print, name)  # <-\n",
        Rule::ComputedAttribute,
        "getattr",
    ),
    (
        "def open(p):\n    return p\ndel open\nopen('/etc/shadow')  # <-\n",
        Rule::PathNotReadable,
        "open",
    ),
    (
        "def vars(o):\n    return o\ndel vars\nvars()  # <-\n",
        Rule::Reflection,
        "vars",
    ),
    (
        "def exec(s):\n    return s\ndel \u{ff45}\u{ff58}\u{ff45}\u{ff43}\nexec('import os')  # <-\n",
        Rule::DynamicCode,
        "del of the NFKC look-alike of the name",
    ),
    (
        "class K:\n    pass\nif K:\n    object = K.mro\nobject.__new__(K)  # <-\n",
        Rule::DunderAttribute,
        "`object.__new__` is sanctioned only when `object` is certainly the builtin",
    ),
    (
        "import pandas as pd\nimport statsmodels.formula.api as smf\ndef hex(v):\n    return v\ndel hex\nsmf.ols('y ~ hex(x)', data=pd.DataFrame())  # <-\n",
        Rule::StringSink,
        "a formula term that may be the builtin",
    ),
];

#[test]
fn a_builtin_is_judged_as_the_builtin_unless_certainly_shadowed() {
    let mut failures = Vec::new();
    for (program, rule, what) in BUILTIN_STILL_IN_PLAY {
        let found = rules_on(program, "# <-");
        if !found.contains(rule) {
            failures.push(format!("{what}: expected {rule}, got {found:?}\n{program}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Bindings that certainly hold: the program's own function, not the builtin.
const CERTAINLY_SHADOWED: &[(&str, &str)] = &[
    (
        "def exec(s):\n    return s\nexec('the program s own function')\n",
        "a def before the use",
    ),
    (
        "def compile(x):\n    return x\ndef run():\n    return compile('y')\nrun()\n",
        "a function written after the binding",
    ),
    (
        "def f(flag):\n    if flag:\n        eval = len\n    else:\n        eval = max\n    return eval([1])\n",
        "function locals never fall back to the builtins",
    ),
    (
        "def outer():\n    def exec(s):\n        return s\n    def inner():\n        return exec('x')\n    del exec\n    return inner\n",
        "a closure over a deleted local is a NameError, not the builtin",
    ),
    (
        "exec = print\nclass K:\n    import sys\n    if sys.argv:\n        exec = len\n    exec('x')\n",
        "a class body falls back to a module binding that certainly holds",
    ),
    (
        "import sys\nif sys.argv:\n    def helper():\n        return 1\nhelper()\n",
        "a name that is not a builtin has nothing to fall back to",
    ),
    (
        "import pandas as pd\nimport statsmodels.formula.api as smf\ndef hex(v):\n    return v\nsmf.ols('y ~ hex(x)', data=pd.DataFrame())\n",
        "a formula is evaluated where it is given, after the def",
    ),
];

#[test]
fn a_binding_that_certainly_holds_shadows_the_builtin() {
    let mut failures = Vec::new();
    for (program, what) in CERTAINLY_SHADOWED {
        let report = check(program);
        if !report.findings.is_empty() {
            let found: Vec<String> = report
                .findings
                .iter()
                .map(|f| format!("{}:{} {}", f.rule.id(), f.span.line, f.message))
                .collect();
            failures.push(format!("{what}: {found:?}\n{program}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
