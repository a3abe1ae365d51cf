# warden-case: e-doctest-docstring
# group: E
# technique: doctest.testmod executes examples written in a docstring
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import doctest


def total(xs):
    """
    >>> __import__('os').system('id')
    0
    """
    return sum(xs)


doctest.testmod()
