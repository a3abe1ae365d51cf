//! Library string evaluators (issue 24, class 1): a string the program built at run time and gave
//! to a library that runs it as code — `sympify`, `parse_expr`, `lambdify`, `DataFrame.query` and
//! `eval`, `pd.eval`, patsy's and statsmodels' formulas, `EvalEnvironment.eval`, jinja2's
//! templates, `typing`'s forward references, `dataclass` field names — is code from a string
//! (DYN401), stopped before it runs, however it reached the evaluator (directly, through another
//! library function, as a callback, in a thread); the same evaluators given the program's literals
//! keep working. The static layer is off (`--no-policy`): this is the runtime layer alone. Every
//! payload would create `/work/PWNED` (a path the policy lets the program write, so only the
//! evaluation itself can be refused); the file is looked for on the host, in the collected work dir.

use super::hook_closed::{
    default_rules, expect_runtime_stop, in_three_threads, output_dir, run_with,
};

/// A payload built at run time: no literal of the program holds it.
const PAYLOAD: &str = "PAY = \"open('/work/\" + ''.join(['PW', 'NED']) + \"', 'w')\"\n";

#[test]
fn computed_strings_given_to_evaluators_are_code_from_strings() {
    warden_test_support::require_root!();
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("sympify", "import sympy\nsympy.sympify(PAY)\n".into(), "DYN401", "compile"),
        ("passed on by simplify", "import sympy\nsympy.simplify(PAY)\n".into(), "DYN401", "compile"),
        ("a callback: Series.map(sympify)", "import sympy, pandas as pd\npd.Series([PAY]).map(sympy.sympify)\n".into(), "DYN401", "compile"),
        ("a thread", "import sympy, threading\nt = threading.Thread(target=sympy.sympify, args=(PAY,))\nt.start()\nt.join()\n".into(), "DYN401", "compile"),
        ("lambdify of a string", "import sympy\nsympy.lambdify(sympy.Symbol('x'), PAY)(1)\n".into(), "DYN401", "compile"),
        ("DataFrame.query with a local callable", "import pandas as pd\ndf = pd.DataFrame({'x': [1]})\nf = open\ndf.query('@f' + ''.join(['(', '\"/work/PW', 'NED\", \"w\")']))\n".into(), "DYN401", "compile"),
        ("DataFrame.eval", "import pandas as pd\ndf = pd.DataFrame({'x': [1]})\ndf.eval('x + ' + str(len(PAY)))\n".into(), "DYN401", "compile"),
        ("pd.eval with a local dict", "import pandas as pd\npd.eval('f' + ''.join(['(', '\"/work/PW', 'NED\", \"w\")']), local_dict={'f': open})\n".into(), "DYN401", "compile"),
        ("a patsy formula term", "import patsy, pandas as pd\npatsy.dmatrix('x + I(' + PAY + ' is None)', pd.DataFrame({'x': [1.0, 2.0]}))\n".into(), "DYN401", "compile"),
        ("patsy's EvalEnvironment", "import patsy\npatsy.EvalEnvironment.capture().eval(PAY)\n".into(), "DYN401", "compile"),
        ("a statsmodels formula", "import statsmodels.formula.api as smf, pandas as pd\nsmf.ols('y ~ x + I(' + PAY + ' is None)', data=pd.DataFrame({'x': [1.0, 2, 3], 'y': [1.0, 2, 4]}))\n".into(), "DYN401", "compile"),
        ("a jinja2 template", "import jinja2\njinja2.Environment().from_string('{{ f(\"/work/' + ''.join(['PW', 'NED']) + '\", \"w\") }}').render(f=open)\n".into(), "DYN401", "compile"),
        ("jinja2's Environment.compile called directly", "import jinja2\nexec(jinja2.Environment().compile('{{ f(\"/work/' + ''.join(['PW', 'NED']) + '\", \"w\") }}'))\n".into(), "DYN401", "compile"),
        ("a forward reference filled at run time", "import typing\nclass R: pass\nR.__annotations__ = {'f': PAY}\ntyping.get_type_hints(R)\n".into(), "DYN401", "compile"),
        ("a dataclass field name", "import dataclasses\nclass R: pass\nR.__annotations__ = {'a=' + PAY + ',b': int}\ndataclasses.dataclass(R)(1)\n".into(), "DYN401", "compile"),
        ("dataclass annotations that are not a plain dict", "import collections, dataclasses\nclass R: pass\nR.__annotations__ = collections.OrderedDict(a=int)\ndataclasses.dataclass(R)(1)\n".into(), "DYN401", "compile"),
        ("query(level=) into warden's bootstrap", "import pandas as pd\ndf = pd.DataFrame({'x': [1]})\ndef leak(level):\n    return df.query('x > 0 and @settings != \"\"', level=level)\nfor level in range(2, 5):\n    try:\n        print('LEAK', level, leak(level))\n    except Exception as err:\n        print('NO', level, type(err).__name__)\n".into(), "ATTR303", "sys._getframe"),
    ];
    let rules = default_rules();
    let failures = in_three_threads(&cases, |(name, body, rule, event), failures| {
        let program = format!("{PAYLOAD}{body}");
        let (_dir, out) = output_dir();
        let run = run_with(&program, &rules, &out, true);
        expect_runtime_stop(name, &run, rule, Some(event), failures);
        if run.stdout().contains("LEAK") {
            failures.push(format!(
                "{name}: the bootstrap's locals were read: {}",
                run.stdout()
            ));
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same evaluators given literals, and the libraries' own uses of them (pandas' Styler renders
/// its package templates through jinja2; typing evaluates string annotations; dataclasses and
/// namedtuples generate their methods), work as they do unconfined.
#[test]
fn literals_given_to_evaluators_still_run() {
    warden_test_support::require_root!();
    let program = r#"
import collections, typing
from dataclasses import dataclass, make_dataclass
import jinja2, numpy as np, pandas as pd, patsy, sympy
import statsmodels.formula.api as smf
df = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [2.0, 4, 5, 9], "g": ["a", "b", "a", "b"]})
t = 2
print("QUERY", len(df.query("x > 1")), len(df.query("x > @t")))
print("EVAL", df.eval("x + y").sum(), pd.eval("df.x + 1").sum())
print("SYMPY", sympy.sympify("x**2 + 1"), sympy.simplify("sin(x)**2 + cos(x)**2"))
print("LAMBDIFY", sympy.lambdify(sympy.Symbol("x"), "sin(x)")(0.0))
print("PATSY", patsy.dmatrix("x + np.log(y)", df).shape)
desc = patsy.ModelDesc.from_formula("y ~ np.log(x)")
print("DESC", patsy.dmatrices(desc, df)[1].shape)
print("OLS", round(smf.ols("y ~ x + C(g)", data=df).fit().params.iloc[0], 3))
print("JINJA", jinja2.Environment().from_string("{{ a }}!").render(a=1))
print("STYLER", df.style.to_html().startswith("<style"))
@dataclass
class P:
    a: int
    b: str = "x"
Q = make_dataclass("Q", ["c", ("d", int)])
class R:
    f: "int"
    g: "typing.Optional[typing.List[str]]"
print("DATA", P(1), Q(1, 2), typing.get_type_hints(R)["f"].__name__)
print("ROWS", [row.x for row in df.itertuples()][:2], collections.namedtuple("N", "a b")(1, 2))
"#;
    let (_dir, out) = output_dir();
    let run = run_with(program, &default_rules(), &out, true);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    assert_eq!(
        run.record["stopped_by"],
        serde_json::Value::Null,
        "{}",
        run.stderr()
    );
    let stdout = run.stdout();
    for expected in [
        "QUERY 3 2",
        "EVAL 30.0 14.0",
        "SYMPY x**2 + 1 1",
        "LAMBDIFY 0.0",
        "PATSY (4, 3)",
        "DESC (4, 2)",
        "OLS -0.5",
        "JINJA 1!",
        "STYLER True",
        "DATA P(a=1, b='x') Q(c=1, d=2) int",
        "ROWS [1.0, 2.0] N(a=1, b=2)",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected}: {stdout}\n{}",
            run.stderr()
        );
    }
}
