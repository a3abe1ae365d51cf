# warden-case: j-multiprocessing-process
# group: J
# technique: multiprocessing.Process running a target
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-survivor
import multiprocessing


def work():
    print("child running")


p = multiprocessing.Process(target=work)
p.start()
p.join()
