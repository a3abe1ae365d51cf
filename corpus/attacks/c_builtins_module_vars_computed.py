# warden-case: c-builtins-module-vars-computed
# group: C
# technique: vars() of the builtins module, then exec looked up in it by a computed key
# variant: computed-string
# expect-static: deny
# expect-rules: DYN403
# expect-jail: contained
# expect-runtime: DYN401
import builtins

namespace = vars(builtins)
namespace["ex" + "ec"]("import os; os.system('id')")
