# warden-case: m-atexit-register
# group: M
# technique: atexit handler runs after the program body
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import atexit


def later():
    print('{"status": "injected after main"}')


atexit.register(later)
print('{"status": "ok"}')
