"""CLIMB extrinsic: counterfactual clinical notes, diagnosis generation, ICD-10-CM mapping,
recall by level and bias."""
