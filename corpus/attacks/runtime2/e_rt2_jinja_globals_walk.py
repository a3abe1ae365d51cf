# warden-case: e-rt2-jinja-globals-walk
# group: E
# technique: a jinja2 template walks cycler.__init__.__globals__ to os and runs a command
# variant: computed-string
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
# expect-runtime: PROC801
import jinja2

template = jinja2.Template("{{ cycler.__init__.__globals__.os.popen('id').read() }}")
print(template.render())
