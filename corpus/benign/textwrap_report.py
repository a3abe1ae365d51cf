# warden-case: textwrap-report
# group: BENIGN
# technique: textwrap fill, shorten and dedent
# expect-static: allow
# expect-output: OK: wrapped into 4 lines
import textwrap

paragraph = ("Quarterly revenue grew in every region, driven mostly by the new subscription "
             "plan; churn stayed flat while support tickets dropped by a fifth.")
lines = textwrap.wrap(paragraph, width=40)
for line in lines:
    print("|", line)
print(textwrap.shorten(paragraph, width=50, placeholder=" ..."))
print(textwrap.indent("a\nb", "> "))
print(f"OK: wrapped into {len(lines)} lines")
