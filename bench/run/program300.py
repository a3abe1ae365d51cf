# A 300-line model-style program for the policy-overhead benchmark (pure Python: the interpreter
# start dominates, so the check's cost is visible).
import math
import statistics
from dataclasses import dataclass


@dataclass
class Point:
    x: float
    y: float

    def norm(self) -> float:
        return math.hypot(self.x, self.y)

def step_0(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_1(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_2(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_3(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_4(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_5(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_6(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_7(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_8(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_9(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_10(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_11(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_12(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_13(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_14(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_15(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_16(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_17(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_18(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_19(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_20(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_21(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_22(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_23(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_24(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_25(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_26(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_27(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_28(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_29(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_30(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_31(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_32(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_33(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_34(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_35(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_36(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_37(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_38(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_39(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_40(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_41(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_42(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_43(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_44(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_45(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_46(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_47(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_48(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_49(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_50(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_51(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_52(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_53(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_54(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_55(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_56(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_57(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_58(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_59(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_60(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_61(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_62(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_63(values):
    total = sum(v * 1 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_64(values):
    total = sum(v * 2 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_65(values):
    total = sum(v * 3 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_66(values):
    total = sum(v * 4 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

def step_67(values):
    total = sum(v * 5 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 1

def step_68(values):
    total = sum(v * 6 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 2

def step_69(values):
    total = sum(v * 7 for v in values)
    return total / max(len(values), 1) + statistics.mean(values) * 0

values = [float(v) for v in range(1, 50)]
STEPS = [step_0, step_1, step_2, step_3, step_4, step_5, step_6, step_7, step_8, step_9, step_10, step_11, step_12, step_13, step_14, step_15, step_16, step_17, step_18, step_19, step_20, step_21, step_22, step_23, step_24, step_25, step_26, step_27, step_28, step_29, step_30, step_31, step_32, step_33, step_34, step_35, step_36, step_37, step_38, step_39, step_40, step_41, step_42, step_43, step_44, step_45, step_46, step_47, step_48, step_49, step_50, step_51, step_52, step_53, step_54, step_55, step_56, step_57, step_58, step_59, step_60, step_61, step_62, step_63, step_64, step_65, step_66, step_67, step_68, step_69]
acc = sum(step(values) for step in STEPS)
points = [Point(v, v / 2) for v in values]
print(round(acc, 3), round(sum(p.norm() for p in points), 3))
