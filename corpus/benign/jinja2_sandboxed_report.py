# warden-case: jinja2-sandboxed-report
# group: BENIGN
# technique: a report rendered with jinja2's SandboxedEnvironment
# expect-static: allow
# expect-output: OK: a=1;b=2;
from jinja2.sandbox import SandboxedEnvironment

env = SandboxedEnvironment()
template = env.from_string("{% for r in rows %}{{ r.name }}={{ r.value }};{% endfor %}")
print("OK: " + template.render(rows=[{"name": "a", "value": 1}, {"name": "b", "value": 2}]))
