# warden-case: match-mapping-commands
# group: BENIGN
# technique: match with mapping, sequence and guard patterns
# expect-static: allow
# expect-output: OK: handled 4 commands, balance 70
def apply(balance, cmd):
    match cmd:
        case {"op": "deposit", "amount": int(amount)} if amount > 0:
            return balance + amount
        case {"op": "withdraw", "amount": int(amount)} if amount <= balance:
            return balance - amount
        case ["fee", int(fee)]:
            return balance - fee
        case _:
            return balance


commands = [
    {"op": "deposit", "amount": 100},
    {"op": "withdraw", "amount": 25},
    ["fee", 5],
    {"op": "withdraw", "amount": 1000},
]
balance = 0
for c in commands:
    balance = apply(balance, c)
print(f"OK: handled {len(commands)} commands, balance {balance}")
