"""Orchard in a notebook: an optimal tree as a scikit-learn estimator.

Run it as a script (`python docs/notebook_example.py`) or paste the cells into
Jupyter; it needs `pip install -e ".[notebook]"` (scikit-learn).
"""

# %% A table with a text column, as pandas holds it
import numpy as np
import orchard
import pandas as pd
from sklearn.model_selection import GridSearchCV, train_test_split

rng = np.random.default_rng(0)
n = 600
X = pd.DataFrame({"income": rng.normal(50, 15, n).round(1),
                  "age": rng.integers(18, 80, n),
                  "region": rng.choice(["north", "south", "east"], n)})
y = np.where((X["income"] > 55) | ((X["region"] == "south") & (X["age"] < 35)),
             "approve", "decline")
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

# %% Fit: the best tree of depth 3, proved optimal on the training rows
model = orchard.OptimalTreeClassifier(max_depth=3, time_limit=30, verbose=True)
model.fit(X_train, y_train)
print(model.algorithm_, model.status_, "optimal:", model.optimal_,
      "training errors:", model.train_error_)
print("test accuracy", model.score(X_test, y_test))
print(model.export_text())

# %% Probabilities are the training classes' shares in each leaf
print(model.predict_proba(X_test.head()))

# %% Depth by cross-validation, like any scikit-learn estimator
search = GridSearchCV(orchard.OptimalTreeClassifier(time_limit=10),
                      {"max_depth": [1, 2, 3], "algorithm": ["greedy", "blossom"]}, cv=3)
search.fit(X_train, y_train)
print(search.best_params_, round(search.best_score_, 3))

# %% The same JSON model file the command line and the app read
model.save("loan_tree.json")   # then: orchard predict loan_tree.json new.csv
print(orchard.OptimalTreeClassifier.load("loan_tree.json").predict(X_test.head()))
