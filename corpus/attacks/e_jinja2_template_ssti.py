# warden-case: e-jinja2-template-ssti
# group: E
# technique: a jinja2 Template walks ''.__class__.__mro__ to the subclasses list (server-side template injection)
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
from jinja2 import Template

text = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
print(Template(text).render()[:200])
