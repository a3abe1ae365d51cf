# warden-case: l-deep-nesting-parens
# group: L
# technique: payload wrapped in 190 levels of parentheses (valid for CPython, beyond the checker's nesting limit)
# variant: other
# expect-static: deny
# expect-rules: SYN004
# expect-jail: contained: command runs inside the jail only
x = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((__import__("os").system("id")))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
