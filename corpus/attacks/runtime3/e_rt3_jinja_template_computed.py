# warden-case: e-rt3-jinja-template-computed
# group: E
# technique: a jinja2 template built at run time calls a function passed to render (a template is compiled to Python)
# variant: computed-string
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: DYN401
import jinja2

name = "".join(["PW", "NED"])
jinja2.Environment().from_string("{{ f('/work/" + name + "', 'w') }}").render(f=open)
