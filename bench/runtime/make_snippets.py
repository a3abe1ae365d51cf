# Generates snippets/*.py: typical model-written notebook cells (GPT style), each prints SNIPPET_OK.
import os, textwrap
S = {}
PRE = "import numpy as np\nimport pandas as pd\n"
S['p01_groupby_agg'] = PRE + """
df = pd.DataFrame({'cat': list('abcabc'), 'x': range(6), 'y': np.arange(6) * 1.5})
res = df.groupby('cat').agg({'x': ['mean', 'sum'], 'y': 'max'}).reset_index()
res.columns = ['_'.join(c).strip('_') for c in res.columns]
print(res)
assert res.shape == (3, 4)
"""
S['p02_resample_M'] = PRE + """
ts = pd.Series(np.arange(100.0), index=pd.date_range('2023-01-01', periods=100, freq='D'))
monthly = ts.resample('M').sum()
print(monthly)
assert len(monthly) == 4
"""
S['p03_resample_H_AS'] = PRE + """
ts = pd.Series(np.ones(48 * 400), index=pd.date_range('2021-01-01', periods=48 * 400, freq='30T'))
hourly = ts.resample('H').sum()
yearly = ts.resample('AS').sum()
print(hourly.head(), yearly)
assert hourly.iloc[0] == 2
"""
S['p04_date_range_aliases'] = PRE + """
a = pd.date_range('2020-01-31', periods=12, freq='M')
b = pd.date_range('2020-01-01', periods=4, freq='Q')
c = pd.date_range('2020-12-31', periods=3, freq='A')
print(a, b, c)
assert len(a) == 12
"""
S['p05_df_append'] = PRE + """
df = pd.DataFrame(columns=['name', 'score'])
for i in range(3):
    df = df.append({'name': f'n{i}', 'score': i * 10}, ignore_index=True)
print(df)
assert len(df) == 3
"""
S['p06_applymap'] = PRE + """
df = pd.DataFrame({'a': [1.234, 2.345], 'b': [3.456, 4.567]})
fmt = df.applymap(lambda v: f'{v:.1f}')
print(fmt)
assert fmt.iloc[0, 0] == '1.2'
"""
S['p07_iteritems'] = PRE + """
s = pd.Series({'a': 1, 'b': 2})
total = 0
for k, v in s.iteritems():
    total += v
df = pd.DataFrame({'a': [1], 'b': [2]})
for col, vals in df.iteritems():
    print(col, vals.tolist())
assert total == 3
"""
S['p08_mse_squared_false'] = """
from sklearn.metrics import mean_squared_error
rmse = mean_squared_error([1, 2, 3], [1, 2, 5], squared=False)
print('RMSE', rmse)
assert abs(rmse - (4 / 3) ** 0.5) < 1e-9
"""
S['p09_sklearn_pipeline'] = """
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report, accuracy_score
X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
pipe = Pipeline([('scaler', StandardScaler()), ('clf', LogisticRegression(max_iter=200))])
pipe.fit(X_train, y_train)
pred = pipe.predict(X_test)
print(classification_report(y_test, pred))
assert accuracy_score(y_test, pred) > 0.8
"""
S['p10_onehot_sparse_false'] = PRE + """
from sklearn.preprocessing import OneHotEncoder
enc = OneHotEncoder(sparse=False, handle_unknown='ignore')
out = enc.fit_transform(pd.DataFrame({'c': ['a', 'b', 'a']}))
print(out)
assert out.shape == (3, 2)
"""
S['p11_get_feature_names'] = """
from sklearn.feature_extraction.text import CountVectorizer
cv = CountVectorizer()
cv.fit(['the cat sat', 'the dog ran'])
print(cv.get_feature_names())
"""
S['p12_pivot_melt'] = PRE + """
df = pd.DataFrame({'date': ['d1', 'd1', 'd2'], 'city': ['x', 'y', 'x'], 'temp': [1, 2, 3]})
wide = df.pivot_table(index='date', columns='city', values='temp', aggfunc='mean')
long = wide.reset_index().melt(id_vars='date', value_name='temp')
print(wide, long)
assert long.shape[0] == 4
"""
S['p13_merge_concat'] = PRE + """
a = pd.DataFrame({'id': [1, 2, 3], 'v': [10, 20, 30]})
b = pd.DataFrame({'id': [2, 3, 4], 'w': [5, 6, 7]})
m = pd.merge(a, b, on='id', how='outer')
c = pd.concat([a, a], ignore_index=True)
print(m, c)
assert len(m) == 4 and len(c) == 6
"""
S['p14_fillna_method'] = PRE + """
df = pd.DataFrame({'a': [1, None, None, 4], 'b': [None, 2, None, 3]})
f = df.fillna(method='ffill')
g = df.fillna(method='bfill')
print(f, g)
assert f['a'].tolist() == [1, 1, 1, 4]
"""
S['p15_groupby_mean_mixed'] = PRE + """
df = pd.DataFrame({'team': ['a', 'a', 'b'], 'player': ['p', 'q', 'r'], 'pts': [1, 3, 5]})
avg = df.groupby('team').mean()
print(avg)
assert avg.loc['a', 'pts'] == 2
"""
S['p16_corr_mixed'] = PRE + """
df = pd.DataFrame({'name': ['a', 'b', 'c'], 'x': [1, 2, 3], 'y': [2, 4, 7]})
c = df.corr()
print(c)
assert c.shape == (2, 2)
"""
S['p17_statsmodels_formula'] = PRE + """
import statsmodels.formula.api as smf
rng = np.random.default_rng(0)
df = pd.DataFrame({'x1': rng.normal(size=100), 'x2': rng.normal(size=100), 'g': rng.choice(['a', 'b'], 100)})
df['y'] = 1 + 2 * df.x1 - df.x2 + rng.normal(scale=0.1, size=100)
model = smf.ols('y ~ x1 + x2 + C(g)', data=df).fit()
print(model.summary())
assert abs(model.params['x1'] - 2) < 0.1
"""
S['p18_statsmodels_ols_arima'] = PRE + """
import statsmodels.api as sm
from statsmodels.tsa.arima.model import ARIMA
from statsmodels.tsa.seasonal import seasonal_decompose
rng = np.random.default_rng(1)
X = sm.add_constant(rng.normal(size=(50, 2)))
y = X @ np.array([1.0, 2.0, 3.0]) + rng.normal(scale=0.01, size=50)
res = sm.OLS(y, X).fit()
print(res.params)
ts = pd.Series(np.sin(np.arange(48) / 2) + np.arange(48) * 0.1, index=pd.date_range('2020-01-01', periods=48, freq='MS'))
fit = ARIMA(ts, order=(1, 1, 1)).fit()
print(fit.forecast(3))
dec = seasonal_decompose(ts, model='additive', period=12)
print(dec.trend.dropna().head())
assert abs(res.params[1] - 2) < 0.05
"""
S['p19_xgboost'] = """
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from xgboost import XGBClassifier
X, y = load_breast_cancer(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
model = XGBClassifier(n_estimators=50, max_depth=3, use_label_encoder=False, eval_metric='logloss', n_jobs=1)
model.fit(Xtr, ytr)
acc = (model.predict(Xte) == yte).mean()
print('acc', acc, model.feature_importances_[:3])
assert acc > 0.9
"""
S['p20_lightgbm'] = """
import lightgbm as lgb
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
X, y = load_diabetes(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
m = lgb.LGBMRegressor(n_estimators=100, learning_rate=0.05, n_jobs=1, verbose=-1)
m.fit(Xtr, ytr, eval_set=[(Xte, yte)], callbacks=[lgb.early_stopping(10, verbose=False)])
print(m.best_iteration_, m.score(Xte, yte))
assert m.score(Xte, yte) > 0.2
"""
S['p21_lightgbm_legacy_fit'] = """
import lightgbm as lgb
from sklearn.datasets import load_diabetes
X, y = load_diabetes(return_X_y=True)
m = lgb.LGBMRegressor(n_estimators=50, n_jobs=1)
m.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])], early_stopping_rounds=10, verbose=False)
print(m.best_iteration_)
"""
S['p22_imblearn_smote'] = """
from collections import Counter
from sklearn.datasets import make_classification
from imblearn.over_sampling import SMOTE
from imblearn.under_sampling import RandomUnderSampler
from imblearn.pipeline import Pipeline
from sklearn.linear_model import LogisticRegression
X, y = make_classification(n_samples=500, weights=[0.9, 0.1], random_state=0)
Xr, yr = SMOTE(random_state=42).fit_resample(X, y)
print(Counter(y), Counter(yr))
pipe = Pipeline([('smote', SMOTE(random_state=0)), ('clf', LogisticRegression())]).fit(X, y)
Xu, yu = RandomUnderSampler(random_state=0).fit_resample(X, y)
assert Counter(yr)[0] == Counter(yr)[1]
"""
S['p23_nltk_tokenize'] = """
import nltk
from nltk.tokenize import word_tokenize, sent_tokenize
from nltk.corpus import stopwords
text = "Hello there! This is a test of NLTK. It splits sentences."
words = word_tokenize(text)
sents = sent_tokenize(text)
sw = set(stopwords.words('english'))
print(words, sents, [w for w in words if w.lower() not in sw])
assert len(sents) == 3
"""
S['p24_nltk_nodata'] = """
from nltk.stem import PorterStemmer, SnowballStemmer
from nltk.util import ngrams
from nltk import FreqDist
from nltk.tokenize import RegexpTokenizer, TreebankWordTokenizer
words = TreebankWordTokenizer().tokenize("The runners were running quickly through the parks.")
ps = PorterStemmer()
print([ps.stem(w) for w in words], SnowballStemmer('english').stem('running'))
print(list(ngrams(words, 2))[:3], FreqDist(words).most_common(2))
print(RegexpTokenizer(r'\\w+').tokenize("a, b; c"))
assert ps.stem('running') == 'run'
"""
S['p25_nltk_wordnet_vader'] = """
from nltk.stem import WordNetLemmatizer
from nltk.sentiment import SentimentIntensityAnalyzer
print(WordNetLemmatizer().lemmatize('cars'))
print(SentimentIntensityAnalyzer().polarity_scores('I love this!'))
"""
S['p26_plotly_express_html'] = PRE + """
import plotly.express as px
df = pd.DataFrame({'x': range(10), 'y': np.arange(10) ** 2, 'g': ['a', 'b'] * 5})
fig = px.scatter(df, x='x', y='y', color='g', title='Squares')
fig.update_layout(template='plotly_white')
html = fig.to_html(include_plotlyjs='cdn', full_html=False)
print(len(html))
assert '<div' in html
"""
S['p27_plotly_go_json'] = """
import plotly.graph_objects as go
from plotly.subplots import make_subplots
fig = make_subplots(rows=1, cols=2)
fig.add_trace(go.Bar(x=['a', 'b'], y=[1, 2]), row=1, col=1)
fig.add_trace(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], mode='lines+markers'), row=1, col=2)
js = fig.to_json()
d = fig.to_dict()
print(len(js), len(d['data']))
assert len(d['data']) == 2
"""
S['p28_excel_roundtrip'] = PRE + """
df = pd.DataFrame({'a': [1, 2, 3], 'b': ['x', 'y', 'z']})
df.to_excel('report.xlsx', sheet_name='Data', index=False)
with pd.ExcelWriter('multi.xlsx', engine='openpyxl') as w:
    df.to_excel(w, sheet_name='one', index=False)
    df.describe().to_excel(w, sheet_name='stats')
back = pd.read_excel('report.xlsx', sheet_name='Data')
sheets = pd.read_excel('multi.xlsx', sheet_name=None)
print(back, list(sheets))
assert back.equals(df) and list(sheets) == ['one', 'stats']
"""
S['p29_openpyxl_direct'] = """
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font
wb = Workbook()
ws = wb.active
ws.title = 'Sales'
ws.append(['Item', 'Qty'])
for i in range(5):
    ws.append([f'item{i}', i])
ws['A1'].font = Font(bold=True)
ws['C1'] = '=SUM(B2:B6)'
wb.save('sales.xlsx')
wb2 = load_workbook('sales.xlsx')
print(wb2.sheetnames, wb2['Sales'].max_row)
assert wb2['Sales'].max_row == 6
"""
S['p30_xlrd_import'] = """
import xlrd
import pandas as pd
print(xlrd.__version__)
try:
    pd.read_excel('missing.xls')
except FileNotFoundError:
    pass
"""
S['p31_parquet_roundtrip'] = PRE + """
df = pd.DataFrame({'a': range(5), 'b': list('abcde'), 'c': pd.date_range('2024-01-01', periods=5)})
df.to_parquet('data.parquet', index=False)
back = pd.read_parquet('data.parquet')
print(back.dtypes)
assert back.equals(df)
"""
S['p32_pyarrow_direct'] = """
import pyarrow as pa
import pyarrow.parquet as pq
import pyarrow.compute as pc
import pyarrow.feather as feather
t = pa.table({'x': [1, 2, 3], 'y': ['a', 'b', 'c']})
pq.write_table(t, 't.parquet')
t2 = pq.read_table('t.parquet')
feather.write_feather(t2.to_pandas(), 't.feather')
print(pc.sum(t2['x']).as_py(), feather.read_feather('t.feather'))
assert pc.sum(t2['x']).as_py() == 6
"""
S['p33_sympy'] = """
import sympy as sp
x, y = sp.symbols('x y')
sol = sp.solve(x**2 - 5*x + 6, x)
d = sp.diff(sp.sin(x) * x**2, x)
i = sp.integrate(sp.exp(-x), (x, 0, sp.oo))
eqs = sp.solve([x + y - 3, x - y - 1], [x, y])
print(sol, d, i, sp.simplify(sp.sin(x)**2 + sp.cos(x)**2), eqs, sp.latex(d))
assert sorted(sol) == [2, 3] and i == 1
"""
S['p34_networkx'] = """
import networkx as nx
G = nx.Graph()
G.add_weighted_edges_from([('a', 'b', 1), ('b', 'c', 2), ('a', 'c', 5), ('c', 'd', 1)])
p = nx.shortest_path(G, 'a', 'd', weight='weight')
pr = nx.pagerank(G)
bc = nx.betweenness_centrality(G)
D = nx.DiGraph([(1, 2), (2, 3)])
print(p, nx.shortest_path_length(G, 'a', 'd', weight='weight'), list(nx.topological_sort(D)), max(pr, key=pr.get))
assert p == ['a', 'b', 'c', 'd']
"""
S['p35_style_to_html'] = PRE + """
df = pd.DataFrame({'a': [1, 2, 3], 'b': [0.1, 0.5, 0.9]})
html = df.style.highlight_max(axis=0).format({'b': '{:.1%}'}).to_html()
print(len(html))
assert '<table' in html
"""
S['p36_style_render'] = PRE + """
df = pd.DataFrame({'a': [1, 2, 3]})
html = df.style.background_gradient(cmap='Blues').render()
print(len(html))
"""
S['p37_bs4'] = """
from bs4 import BeautifulSoup
html = '<html><body><h1 class="t">Title</h1><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul><table><tr><td>1</td><td>2</td></tr></table></body></html>'
soup = BeautifulSoup(html, 'html.parser')
links = [a['href'] for a in soup.find_all('a')]
print(soup.find('h1', class_='t').text, links, soup.select('td')[1].get_text(), soup.title)
assert links == ['/a', '/b']
"""
S['p38_tabulate'] = PRE + """
from tabulate import tabulate
df = pd.DataFrame({'name': ['a', 'b'], 'score': [1.5, 2.25]})
print(tabulate(df, headers='keys', tablefmt='psql', showindex=False))
print(tabulate([[1, 2], [3, 4]], headers=['x', 'y'], tablefmt='github'))
print(df.to_markdown(index=False))
"""
S['p39_seaborn_plots'] = PRE + """
import matplotlib.pyplot as plt
import seaborn as sns
rng = np.random.default_rng(0)
df = pd.DataFrame({'x': rng.normal(size=200), 'y': rng.normal(size=200), 'g': rng.choice(['a', 'b'], 200)})
sns.set(style='whitegrid')
fig, axes = plt.subplots(1, 3, figsize=(12, 4))
sns.histplot(df, x='x', hue='g', kde=True, ax=axes[0])
sns.boxplot(data=df, x='g', y='y', ax=axes[1])
sns.heatmap(df[['x', 'y']].corr(), annot=True, ax=axes[2])
plt.tight_layout(); plt.savefig('fig.png')
g = sns.pairplot(df, hue='g'); g.savefig('pair.png')
"""
S['p40_seaborn_distplot'] = PRE + """
import matplotlib.pyplot as plt
import seaborn as sns
sns.distplot(np.random.default_rng(0).normal(size=100))
plt.savefig('d.png')
"""
S['p41_mpl_style_seaborn'] = """
import matplotlib.pyplot as plt
plt.style.use('seaborn')
plt.plot([1, 2, 3]); plt.savefig('s.png')
"""
S['p42_np_float_alias'] = """
import numpy as np
a = np.array([1, 2, 3], dtype=np.float)
b = a.astype(np.int)
print(a, b)
"""
S['p43_read_csv_describe'] = PRE + """
import io
csv = io.StringIO('date,region,sales\\n2024-01-01,N,10\\n2024-01-02,S,20\\n2024-02-01,N,30\\n2024-02-03,S,25\\n')
df = pd.read_csv(csv, parse_dates=['date'])
print(df.describe(), df['region'].value_counts())
df['month'] = df['date'].dt.to_period('M')
print(df.groupby(['month', 'region'])['sales'].sum().unstack())
df.to_csv('out.csv', index=False)
assert df['sales'].sum() == 85
"""
S['p44_scipy_stats'] = PRE + """
from scipy import stats
from scipy.optimize import minimize, curve_fit
rng = np.random.default_rng(0)
a, b = rng.normal(0, 1, 50), rng.normal(0.5, 1, 50)
t, p = stats.ttest_ind(a, b)
r, pr = stats.pearsonr(a, b)
chi2, pc, dof, exp = stats.chi2_contingency([[10, 20], [20, 10]])
res = minimize(lambda v: (v[0] - 3) ** 2, x0=[0])
popt, _ = curve_fit(lambda x, m, c: m * x + c, np.arange(10), 2 * np.arange(10) + 1)
print(t, p, r, chi2, res.x, popt, stats.mode([1, 1, 2]))
assert abs(res.x[0] - 3) < 1e-4
"""
S['p45_kmeans_gridsearch'] = """
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_classification
from sklearn.metrics import silhouette_score
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.ensemble import RandomForestClassifier
X, _ = make_blobs(n_samples=200, centers=3, random_state=0)
km = KMeans(n_clusters=3, random_state=0).fit(X)
print(silhouette_score(X, km.labels_))
Xc, yc = make_classification(n_samples=200, random_state=0)
gs = GridSearchCV(RandomForestClassifier(random_state=0), {'n_estimators': [10, 20], 'max_depth': [None, 3]}, cv=3, n_jobs=1)
gs.fit(Xc, yc)
print(gs.best_params_, cross_val_score(gs.best_estimator_, Xc, yc, cv=3).mean())
"""
S['p46_rolling_groupby_apply'] = PRE + """
df = pd.DataFrame({'store': ['a'] * 10 + ['b'] * 10, 'day': list(pd.date_range('2024-01-01', periods=10)) * 2, 'sales': np.arange(20.0)})
df['ma3'] = df.groupby('store')['sales'].transform(lambda s: s.rolling(3, min_periods=1).mean())
weekly = df.set_index('day').groupby('store')['sales'].resample('W').sum()
top = df.groupby('store').apply(lambda g: g.nlargest(2, 'sales'))
print(df.head(), weekly, top)
df['pct'] = df.groupby('store')['sales'].pct_change()
"""
S['p47_df_mad'] = PRE + """
df = pd.DataFrame({'a': [1.0, 2.0, 3.0]})
print(df.mad(), df['a'].mad())
"""
S['p48_load_boston'] = """
from sklearn.datasets import load_boston
X, y = load_boston(return_X_y=True)
print(X.shape)
"""
S['p49_jinja_yaml'] = """
import yaml
from jinja2 import Template, Environment
cfg = yaml.safe_load('name: report\\nitems: [1, 2, 3]\\n')
out = Template('{{ name }}: {% for i in items %}{{ i }} {% endfor %}').render(**cfg)
print(out, yaml.safe_dump(cfg))
assert out.startswith('report: 1 2 3')
"""
S['p50_to_datetime_infer_delim'] = PRE + """
import io
s = pd.to_datetime(pd.Series(['2024-01-05', '2024-02-06']), infer_datetime_format=True)
df = pd.read_csv(io.StringIO('a b\\n1 2\\n3 4\\n'), delim_whitespace=True)
print(s, df)
assert df.shape == (2, 2)
"""
S['p51_swaplevel_sort_values_inplace'] = PRE + """
df = pd.DataFrame({'k': ['b', 'a', 'c'], 'v': [2, 1, 3]})
df.sort_values('v', inplace=True)
df.reset_index(drop=True, inplace=True)
df['rank'] = df['v'].rank(method='dense').astype(int)
df.loc[df['v'] > 1, 'flag'] = 'hi'
df['flag'].fillna('lo', inplace=True)
s = df.set_index('k')['v']
print(df, s.idxmax(), df.nunique(), df.dtypes)
assert s.idxmax() == 'c'
"""
S['p52_series_getitem_int_on_label_index'] = PRE + """
s = pd.Series([10, 20, 30], index=['a', 'b', 'c'])
first = s[0]
last = s[-1]
print(first, last)
assert first == 10 and last == 30
"""
S['p53_statsmodels_logit_vif'] = PRE + """
import statsmodels.api as sm
from statsmodels.stats.outliers_influence import variance_inflation_factor
rng = np.random.default_rng(0)
X = pd.DataFrame({'a': rng.normal(size=200), 'b': rng.normal(size=200)})
y = (X['a'] + rng.normal(size=200) > 0).astype(int)
Xc = sm.add_constant(X)
logit = sm.Logit(y, Xc).fit(disp=0)
vif = [variance_inflation_factor(Xc.values, i) for i in range(Xc.shape[1])]
print(logit.summary2(), vif)
"""
for name, code in S.items():
    with open(f'snippets/{name}.py', 'w') as f:
        f.write(f'# model-style snippet {name}\n' + textwrap.dedent(code).lstrip('\n') + "\nprint('SNIPPET_OK')\n")
print(len(S), 'snippets')
# --- modern-API snippets: what newer models (trained on 2024+ code) write; the cost of going too old ---
M = {}
M['m01_resample_ME'] = PRE + """
ts = pd.Series(np.arange(60.0), index=pd.date_range('2024-01-01', periods=60, freq='D'))
print(ts.resample('ME').mean(), pd.date_range('2024-01-01', periods=3, freq='h'))
"""
M['m02_dataframe_map'] = PRE + """
df = pd.DataFrame({'a': [1.0, 2.0]})
print(df.map(lambda v: v * 2))
"""
M['m03_onehot_sparse_output'] = PRE + """
from sklearn.preprocessing import OneHotEncoder
enc = OneHotEncoder(sparse_output=False, handle_unknown='ignore')
print(enc.fit_transform(pd.DataFrame({'c': ['a', 'b']})), enc.get_feature_names_out())
"""
M['m04_root_mean_squared_error'] = """
from sklearn.metrics import root_mean_squared_error
print(root_mean_squared_error([1, 2, 3], [1, 2, 5]))
"""
M['m05_set_output_pandas'] = PRE + """
from sklearn.preprocessing import StandardScaler
out = StandardScaler().set_output(transform='pandas').fit_transform(pd.DataFrame({'a': [1.0, 2.0, 3.0]}))
assert isinstance(out, pd.DataFrame)
"""
M['m06_mpl_style_v0_8'] = """
import matplotlib.pyplot as plt
plt.style.use('seaborn-v0_8-whitegrid')
plt.plot([1, 2]); plt.savefig('s.png')
"""
M['m07_groupby_apply_include_groups'] = PRE + """
df = pd.DataFrame({'g': ['a', 'a', 'b'], 'v': [1, 2, 3]})
print(df.groupby('g').apply(lambda x: x['v'].sum(), include_groups=False))
"""
M['m08_numpy2_names'] = """
import numpy as np
print(np.trapezoid([1, 2, 3]), np.bool(1), np.long(3))
"""
M['m09_concat_instead_of_append'] = PRE + """
df = pd.DataFrame({'a': [1]})
df = pd.concat([df, pd.DataFrame([{'a': 2}])], ignore_index=True)
print(df.to_numpy(), df.groupby('a', observed=True).size())
"""
M['m10_value_counts_df_and_case_when'] = PRE + """
df = pd.DataFrame({'a': ['x', 'y', 'x']})
print(df.value_counts())
s = pd.Series([1, 5, 9])
print(s.case_when([(s < 3, 'low'), (s > 7, 'high')]))
"""
for name, code in M.items():
    with open(f'snippets/{name}.py', 'w') as f:
        f.write(f'# model-style snippet {name} (modern API)\n' + textwrap.dedent(code).lstrip('\n') + "\nprint('SNIPPET_OK')\n")
print(len(M), 'modern snippets')
X = {}
X['p54_xgboost_legacy_fit'] = """
from sklearn.datasets import load_breast_cancer
from xgboost import XGBClassifier
X, y = load_breast_cancer(return_X_y=True)
m = XGBClassifier(n_estimators=50, n_jobs=1)
m.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])], early_stopping_rounds=5, eval_metric='logloss', verbose=False)
print(m.best_iteration)
"""
X['p55_sns_set_mpl_seaborn_style_v'] = PRE + """
import matplotlib.pyplot as plt
plt.style.use('seaborn-whitegrid')
plt.plot([1, 2]); plt.savefig('s.png')
"""
for name, code in X.items():
    with open(f'snippets/{name}.py', 'w') as f:
        f.write(f'# model-style snippet {name}\n' + textwrap.dedent(code).lstrip('\n') + "\nprint('SNIPPET_OK')\n")
