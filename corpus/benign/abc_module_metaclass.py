# warden-case: abc-module-metaclass
# group: BENIGN
# technique: metaclass=abc.ABCMeta through the module and ABCMeta.register
# expect-static: allow
# expect-output: OK: tuple registered as Sequence-like
import abc


class SequenceLike(metaclass=abc.ABCMeta):
    @abc.abstractmethod
    def __len__(self):
        ...


SequenceLike.register(tuple)
assert isinstance((1, 2), SequenceLike)
print("OK: tuple registered as Sequence-like")
