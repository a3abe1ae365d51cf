//! A module the policy allows only in part appears only as `module.<member>` (issue 13, point 3): used
//! as a value anywhere the resolver does not follow it, what it reaches afterwards is out of sight, so
//! the use itself is IMP101.

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

/// True when `report` has an IMP101 finding about a module value on `line`.
fn module_value_on(report: &Report, line: usize) -> bool {
    report.findings.iter().any(|f| {
        f.rule == Rule::ImportNotAllowed
            && f.span.line == line
            && f.message.contains("used as a value")
    })
}

/// Each program must report a module value on the line marked `# <-`.
const ESCAPES: &[(&str, &str)] = &[
    ("import os\nprint(os)  # <-\n", "passed to a function"),
    ("import os\nimport operator\noperator.methodcaller('system', 'id')(os)  # <-\n", "passed to a methodcaller"),
    ("import os\nmods = [os]  # <-\n", "stored in a list"),
    ("import os\nmods = {'m': os}  # <-\n", "stored in a dict"),
    ("import os\nclass Box:\n    pass\nBox.m = os  # <-\n", "stored as an attribute"),
    ("import os\nd = {}\nd['m'] = os  # <-\n", "stored under a key"),
    ("import os\nname = input\nx = getattr(os, name)  # <-\n", "getattr with a computed name"),
    ("import os\nprint(vars(os))  # <-\n", "vars"),
    ("import os\ndef tools():\n    return os  # <-\n", "returned"),
    ("import os\ndef tools():\n    yield os  # <-\n", "yielded"),
    ("import os\nf = lambda: os  # <-\n", "a lambda's result"),
    ("import os\ndef run(m=os):  # <-\n    return m\n", "a default value"),
    ("import os\nif (m := os) is not None:  # <-\n    pass\n", "a walrus"),
    ("import os\nclass Box:\n    m = os  # <-\n", "a class attribute"),
    ("import os\nclass Box:\n    mods = [m for m in (os,)]  # <-\n", "a comprehension's result"),
    ("import os\ndef bind():\n    global handle\n    handle = os  # <-\n", "a global assigned in a function"),
    ("import os\ndef outer():\n    handle = None\n    def bind():\n        nonlocal handle\n        handle = os  # <-\n", "a nonlocal"),
    ("import os\nhandle = other = None\nother.m = handle = os  # <-\n", "one of several targets is not followed"),
    ("import os\nm = os\nprint(m)  # <-\n", "an alias of the module, then passed"),
    ("import os as o\nfor m in [o]:\n    print(m)  # <-\n", "a loop variable over the module"),
    ("import os\nx = os if input else None  # <-\n", "a conditional expression's value"),
    ("import os\nx = None or os  # <-\n", "an `or` outside a test"),
    ("import os\nprint(os == 1)  # <-\n", "`==` hands the module to the other operand's __eq__"),
    ("import sys\nprint(sys)  # <-\n", "`sys` (imports.members)"),
    ("import builtins\nns = (builtins,)  # <-\n", "`builtins` (imports.members)"),
    ("import pandas as pd\nprint(pd)  # <-\n", "`pandas` (pandas.read_pickle is denied)"),
    ("import numpy as np\ndef f(xp=np):  # <-\n    return xp\n", "`numpy` (numpy.ctypeslib is denied)"),
    ("import pandas as pd\nx = [pd.io]  # <-\n", "`pandas.io` (pandas.io.pickle is denied)"),
    ("from sklearn import datasets\nprint(datasets)  # <-\n", "`sklearn.datasets` by from-import"),
    ("import pandas as pd\nprint(getattr(pd, 'io'))  # <-\n", "a getattr with a literal, used as a value"),
];

#[test]
fn a_module_allowed_in_part_is_not_a_value() {
    let mut failures = Vec::new();
    for (program, what) in ESCAPES {
        let report = check(program);
        let line = program
            .lines()
            .position(|l| l.ends_with("# <-"))
            .map_or(0, |index| index + 1);
        if !module_value_on(&report, line) {
            failures.push(format!(
                "{what}: expected IMP101 on line {line}, got {:?}\n{program}",
                summary(&report)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Uses the resolver follows, tests, and modules allowed in full: no finding.
const FOLLOWED: &[(&str, &str)] = &[
    ("import os\nprint(os.getcwd(), os.path.join('a', 'b'), os.sep)\n", "members"),
    ("import os\nm = os\nprint(m.getcwd())\n", "an alias used as `alias.member`"),
    ("import os, sys\na, b = os, sys\nprint(a.sep, b.argv)\n", "a tuple of names"),
    ("import os\nfor m in (os, os.path):\n    print(m.sep)\n", "a loop over a literal tuple"),
    ("import os\nprint([m.sep for m in [os]])\n", "a comprehension over a literal list"),
    ("import os\nprint(getattr(os, 'sep'), hasattr(os, 'sep'))\n", "getattr with a literal name"),
    ("try:\n    import numpy as np\nexcept ImportError:\n    np = None\nif np is not None and not np:\n    print(np.zeros(2))\n", "tests"),
    ("import pandas as pd\nprint(pd.DataFrame({'a': [1]}) if pd else None)\n", "a conditional's test"),
    ("import math, json\nprint(math, json)\n", "modules allowed in full"),
    ("import numpy as np\nrng = np.random\nprint(rng.default_rng(0).random())\nprint(np.random)\n", "a submodule with nothing denied"),
    ("import os.path\nfrom os import path\nprint(path, os.path)\n", "os.path is allowed in full"),
    ("import matplotlib.pyplot as plt\nfig = plt\nprint(plt)\n", "matplotlib"),
];

#[test]
fn followed_uses_of_a_module_allowed_in_part_are_not_values() {
    let mut failures = Vec::new();
    for (program, what) in FOLLOWED {
        let report = check(program);
        if !report.findings.is_empty() {
            failures.push(format!("{what}: {:?}\n{program}", summary(&report)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `getattr(module, name)` with `name` bound only to literals is each `module.literal`, judged as a
/// reference (the resolver follows only a literal written in the call); `hasattr` returns no attribute.
#[test]
fn getattr_with_names_bound_to_literals_judges_the_references() {
    let denied =
        check("import numpy as np\nfor name in ['amin', 'ctypeslib']:\n    getattr(np, name)\n");
    assert!(
        denied
            .findings
            .iter()
            .any(|f| f.rule == Rule::ImportNotAllowed && f.message.contains("numpy.ctypeslib")),
        "{:?}",
        summary(&denied)
    );
    let probed = check(
        "import numpy as np\nfor name in ['amin', 'ctypeslib']:\n    print(hasattr(np, name))\n",
    );
    assert!(probed.findings.is_empty(), "{:?}", summary(&probed));
}
