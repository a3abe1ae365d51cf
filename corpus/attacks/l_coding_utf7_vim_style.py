# warden-case: l-coding-utf7-vim-style
# vim: set fileencoding=utf-7 :
# group: L
# technique: utf-7 declared with a vim modeline (fileencoding=), hidden statement in a comment
# variant: coding-declaration
# references: https://peps.python.org/pep-0263/
# expect-static: deny
# expect-rules: SYN003
# expect-jail: contained
scores = {"a": 1, "b": 2}
print(sorted(scores))
# note: +AAo-__import__(+ACI-os+ACI-).system(+ACI-id+ACI-)
