# warden-case: b-coroutine-cr-frame
# group: B
# technique: un-awaited coroutine exposes cr_frame.f_globals
# variant: plain
# expect-static: deny
# expect-rules: ATTR303 ATTR301
# expect-jail: contained
async def job():
    return 1

co = job()
glb = co.cr_frame.f_globals
co.close()
glb["__builtins__"].exec("import os; os.system('id')")
