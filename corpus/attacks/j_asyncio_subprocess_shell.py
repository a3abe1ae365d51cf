# warden-case: j-asyncio-subprocess-shell
# group: J
# technique: asyncio.create_subprocess_shell
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import asyncio


async def main():
    proc = await asyncio.create_subprocess_shell("id")
    await proc.wait()


asyncio.run(main())
