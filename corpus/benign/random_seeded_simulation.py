# warden-case: random-seeded-simulation
# group: BENIGN
# technique: seeded Monte Carlo with the random module
# expect-static: allow
# expect-output: OK: simulated 10000 dice pairs, P(sum=7) close True
import random

rng = random.Random(1234)
trials = 10_000
sevens = sum(1 for _ in range(trials) if rng.randint(1, 6) + rng.randint(1, 6) == 7)
p = sevens / trials
sample = rng.sample(range(100), 5)
print(f"estimate {p:.3f}, sample size {len(sample)}")
print(f"OK: simulated {trials} dice pairs, P(sum=7) close {abs(p - 1 / 6) < 0.02}")
