#!/usr/bin/env python3
"""Writes the session corpus's input files (corpus/sessions/inputs/), deterministically.

Usage: python3 corpus/sessions/make_inputs.py [--check]

Standard library only, fixed seeds: the same bytes on every machine and every Python 3. With --check it
writes nothing and exits 1 when a file in inputs/ differs from what it would write (the comparison test
runs it so the shipped files and this script cannot drift apart). The data are invented: small, with the
blemishes real exports have (missing values, duplicates, numbers stored as text, stray spaces), so the
sessions have something to clean.
"""

import csv
import io
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "inputs")


def table(header, rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def day(start_ordinal, offset):
    """ISO date `offset` days after 2024-01-01 + start_ordinal, without datetime's locale or tz."""
    n = start_ordinal + offset
    months = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]  # 2024 is a leap year
    month = 0
    while n >= months[month]:
        n -= months[month]
        month = (month + 1) % 12
    return f"2024-{month + 1:02d}-{n + 1:02d}"


def sales():
    rng = random.Random(1)
    regions = ["North", "South", "East", "West"]
    products = {"Widget": 12.5, "Gadget": 30.0, "Doohickey": 7.25, "Gizmo": 55.0}
    rows = []
    for i in range(240):
        product = rng.choice(list(products))
        units = rng.randint(1, 40)
        price = products[product]
        if rng.random() < 0.1:
            price = round(price * rng.choice([0.9, 0.8]), 2)  # discounts
        region = rng.choice(regions)
        if rng.random() < 0.04:
            region = " " + region.lower() + " "  # a hand-typed row
        units_text = "" if rng.random() < 0.03 else str(units)
        rows.append([f"S{1000 + i}", day(0, rng.randint(0, 180)), region, product, units_text, price,
                     f"C{rng.randint(1, 60):03d}"])
    rows += [rows[5], rows[17]]  # duplicated export lines
    return table(["order_id", "date", "region", "product", "units", "unit_price", "customer_id"], rows)


def customers():
    rng = random.Random(2)
    first = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jia", "Kofi", "Lena"]
    last = ["Silva", "Okafor", "Nguyen", "Schmidt", "Rossi", "Kowalski", "Haddad", "Tanaka", "Moreau"]
    rows = []
    for i in range(1, 61):
        segment = rng.choice(["Consumer", "Corporate", "Home Office"])
        country = rng.choice(["DE", "FR", "US", "US", "JP", "BR"])
        rows.append([f"C{i:03d}", f"{rng.choice(first)} {rng.choice(last)}", segment, country,
                     day(0, rng.randint(-700, -1) % 366), rng.choice(["yes", "no", "no"])])
    return table(["customer_id", "name", "segment", "country", "signup_date", "newsletter"], rows)


def weather():
    rng = random.Random(3)
    cities = {"Oslo": (2.0, 14.0), "Madrid": (10.0, 12.0), "Cairo": (19.0, 9.0)}
    rows = []
    for d in range(120):
        for city, (base, swing) in cities.items():
            temp = base + swing * math.sin((d - 30) / 120 * math.pi) + rng.gauss(0, 2.0)
            humidity = max(10, min(100, round(rng.gauss(65 if city == "Oslo" else 45, 12))))
            rain = round(max(0.0, rng.gauss(1.5 if city == "Oslo" else 0.4, 2.0)), 1)
            temp_text = "" if rng.random() < 0.02 else f"{temp:.1f}"
            rows.append([day(0, d), city, temp_text, humidity, rain])
    return table(["date", "city", "temp_c", "humidity", "precip_mm"], rows)


def housing():
    rng = random.Random(4)
    hoods = {"Riverside": 1.15, "Old Town": 1.3, "Hillcrest": 1.0, "Industrial": 0.8}
    rows = []
    for i in range(200):
        hood = rng.choice(list(hoods))
        sqft = rng.randint(550, 3200)
        bedrooms = max(1, min(6, round(sqft / 650 + rng.gauss(0, 0.6))))
        bathrooms = max(1, min(4, round(bedrooms / 2 + rng.random())))
        age = rng.randint(0, 90)
        price = (42000 + 160 * sqft + 9000 * bedrooms - 600 * age) * hoods[hood] + rng.gauss(0, 25000)
        rows.append([i + 1, hood, sqft, bedrooms, bathrooms, age, "" if rng.random() < 0.03 else rng.choice(["yes", "no"]),
                     round(price, -2)])
    return table(["house_id", "neighborhood", "sqft", "bedrooms", "bathrooms", "age_years", "garage", "price"], rows)


def employees():
    rng = random.Random(5)
    departments = {"Engineering": 92000, "Sales": 61000, "Marketing": 67000, "Support": 48000, "Finance": 78000}
    first = ["Alex", "Sam", "Robin", "Kim", "Jordan", "Taylor", "Morgan", "Casey", "Riley", "Quinn"]
    rows = []
    for i in range(1, 121):
        dept = rng.choice(list(departments))
        salary = round(departments[dept] * rng.uniform(0.8, 1.3), -2)
        salary_text = f"${salary:,.0f}" if rng.random() < 0.5 else f"{salary:.0f}"
        score = "" if rng.random() < 0.05 else round(rng.uniform(2.0, 5.0), 1)
        rows.append([f"E{i:04d}", f"{rng.choice(first)} {chr(65 + i % 26)}.", dept, salary_text,
                     day(0, rng.randint(0, 365)).replace("2024", str(rng.randint(2012, 2023))), score,
                     rng.choice(["True", "False", "false", "TRUE"])])
    rows.append(rows[10])
    return table(["emp_id", "name", "department", "salary", "hire_date", "perf_score", "remote"], rows)


def penguins():
    rng = random.Random(6)
    kinds = {
        "Adelie": (38.8, 18.3, 190, 3700, ["Torgersen", "Biscoe", "Dream"]),
        "Chinstrap": (48.8, 18.4, 196, 3730, ["Dream"]),
        "Gentoo": (47.5, 15.0, 217, 5080, ["Biscoe"]),
    }
    rows = []
    for _ in range(180):
        species = rng.choice(list(kinds))
        bill_l, bill_d, flipper, mass, islands = kinds[species]
        sex = rng.choice(["male", "female"])
        bump = 1.04 if sex == "male" else 0.96
        row = [species, rng.choice(islands), round(rng.gauss(bill_l * bump, 2.5), 1),
               round(rng.gauss(bill_d * bump, 0.9), 1), round(rng.gauss(flipper * bump, 6)),
               round(rng.gauss(mass * bump, 350), -1), sex]
        if rng.random() < 0.05:
            row[2:5] = ["", "", ""]
        if rng.random() < 0.05:
            row[6] = ""
        rows.append(row)
    return table(["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g",
                  "sex"], rows)


def traffic():
    rng = random.Random(7)
    pages = {"/home": 120, "/pricing": 40, "/blog": 65, "/signup": 18}
    rows = []
    for hour in range(24 * 14):
        d, h = divmod(hour, 24)
        for page, base in pages.items():
            daily = 0.35 + 0.65 * math.sin(max(0.0, (h - 6) / 16 * math.pi)) ** 2
            weekend = 0.6 if d % 7 in (5, 6) else 1.0
            visits = max(0, round(base * daily * weekend + rng.gauss(0, base * 0.08)))
            bounce = round(min(0.95, max(0.05, rng.gauss(0.45 if page != "/signup" else 0.25, 0.07))), 3)
            rows.append([f"{day(0, d)} {h:02d}:00:00", page, visits, bounce])
    return table(["timestamp", "page", "visits", "bounce_rate"], rows)


def survey():
    rng = random.Random(8)
    comments = ["Great service", "too slow", "Loved it!", "ok", "Would recommend", "app crashes sometimes",
                "", "support was helpful", "Pricing is confusing", "fine"]
    rows = []
    for i in range(1, 151):
        age = rng.randint(18, 75)
        channel = rng.choice(["email", "web", "phone", "Web", "EMAIL"])
        sat = rng.choice([1, 2, 3, 3, 4, 4, 4, 5, 5])
        rows.append([i, age, rng.choice(["f", "m", "x"]), channel, sat, rng.choice(["yes", "no"]),
                     rng.choice(comments)])
    return table(["respondent", "age", "gender", "channel", "satisfaction", "would_return", "comment"], rows)


def churn():
    rng = random.Random(9)
    rows = []
    for i in range(1, 401):
        tenure = rng.randint(1, 72)
        monthly = round(rng.uniform(20, 110), 2)
        contract = rng.choice(["month-to-month", "one-year", "two-year"])
        tickets = min(9, int(rng.expovariate(0.7)))
        score = -1.0 + 0.045 * (110 - monthly) / 10 + 0.05 * tenure - 0.45 * tickets
        score += {"month-to-month": -1.2, "one-year": 0.4, "two-year": 1.3}[contract]
        churned = 1 if rng.random() > 1 / (1 + math.exp(-score)) else 0
        rows.append([f"U{i:04d}", tenure, monthly, round(monthly * tenure + rng.gauss(0, 20), 2), contract,
                     tickets, rng.choice(["card", "bank", "paypal"]), churned])
    return table(["user_id", "tenure_months", "monthly_fee", "total_paid", "contract", "support_tickets",
                  "payment", "churned"], rows)


def stocks():
    rng = random.Random(10)
    tickers = {"ACME": 100.0, "GLOBX": 45.0, "INIT": 250.0}
    rows = []
    for ticker, price in tickers.items():
        for d in range(90):
            if d % 7 in (5, 6):
                continue
            price *= math.exp(rng.gauss(0.0005, 0.018))
            rows.append([day(0, d), ticker, round(price, 2), rng.randint(100_000, 900_000)])
    return table(["date", "ticker", "close", "volume"], rows)


def students():
    rng = random.Random(11)
    rows = []
    for i in range(1, 91):
        klass = rng.choice(["7A", "7B", "8A", "8B"])
        prep = rng.choice(["none", "completed"])
        bonus = 6 if prep == "completed" else 0
        math_s = max(0, min(100, round(rng.gauss(66 + bonus, 13))))
        reading = max(0, min(100, round(0.6 * math_s + rng.gauss(28, 8))))
        writing = max(0, min(100, round(0.8 * reading + rng.gauss(14, 6))))
        rows.append([f"st{i:03d}", klass, prep, math_s, reading, writing, rng.randint(0, 12)])
    return table(["student", "class", "test_prep", "math", "reading", "writing", "absences"], rows)


def products():
    rows = [["Widget", "Hardware", 6.1, "Acme Parts"], ["Gadget", "Electronics", 17.9, "Voltline"],
            ["Doohickey", "Hardware", 2.95, "Acme Parts"], ["Gizmo", "Electronics", 31.0, "Voltline"],
            ["Thingamajig", "Toys", 4.4, "FunCo"]]
    return table(["product", "category", "unit_cost", "supplier"], rows)


def orders_json():
    rng = random.Random(12)
    records = []
    for i in range(1, 41):
        items = [{"sku": rng.choice(["A1", "B2", "C3", "D4"]), "qty": rng.randint(1, 5)}
                 for _ in range(rng.randint(1, 3))]
        records.append({"order": 5000 + i, "customer": f"C{rng.randint(1, 60):03d}",
                        "status": rng.choice(["shipped", "shipped", "pending", "cancelled"]),
                        "items": items, "coupon": rng.choice([None, None, "SPRING10", "VIP"])})
    return json.dumps(records, indent=1) + "\n"


def reviews():
    rng = random.Random(13)
    good = ["great", "excellent", "love", "perfect", "fast", "happy", "recommend", "quality"]
    bad = ["broken", "slow", "refund", "poor", "late", "disappointed", "cheap", "return"]
    neutral = ["the", "product", "it", "was", "and", "delivery", "item", "box", "arrived", "price"]
    rows = []
    for i in range(1, 201):
        positive = rng.random() < 0.55
        words = [rng.choice(neutral) for _ in range(rng.randint(4, 9))]
        words += [rng.choice(good if positive else bad) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.2:
            words.append(rng.choice(bad if positive else good))
        rng.shuffle(words)
        rows.append([i, " ".join(words).capitalize(), 1 if positive else 0, rng.randint(1, 5) if positive else rng.randint(1, 3)])
    return table(["review_id", "text", "positive", "stars"], rows)


FILES = {
    "sales.csv": sales,
    "customers.csv": customers,
    "weather.csv": weather,
    "housing.csv": housing,
    "employees.csv": employees,
    "penguins.csv": penguins,
    "traffic.csv": traffic,
    "survey.csv": survey,
    "churn.csv": churn,
    "stocks.csv": stocks,
    "students.csv": students,
    "products.csv": products,
    "orders.json": orders_json,
    "reviews.csv": reviews,
}


def main():
    check = "--check" in sys.argv[1:]
    os.makedirs(OUT, exist_ok=True)
    stale = []
    for name, make in FILES.items():
        text = make()
        path = os.path.join(OUT, name)
        if check:
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
    if stale:
        print(f"make_inputs: out of date: {', '.join(stale)} (run python3 corpus/sessions/make_inputs.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
