"""CLIMB intrinsic: name probabilities for every ICD-10-CM code, AssocMAD and sex preference."""
