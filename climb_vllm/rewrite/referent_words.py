"""The words the referent rules read: relatives, roles, and the verbs and states that tell a
patient from someone who cares for them (:mod:`~climb_vllm.rewrite.referents`).

Each list was written from general clinical English and measured on the labelled excerpts in
``tests/golden/counterfactual/`` (NOTES.md); a word is listed only when it nearly always
points one way in a note.
"""

from __future__ import annotations

import re

KIN_MALE = frozenset(
    "father dad brother son grandfather grandson uncle nephew husband boyfriend stepfather "
    "stepson brothers sons grandad granddad grandpa".split()
)
KIN_FEMALE = frozenset(
    "mother mom sister daughter grandmother granddaughter aunt niece wife girlfriend "
    "stepmother stepdaughter landlady sisters daughters mum grandma granny".split()
)
# People of either sex named by their role (the sex is not known from the word).
ROLES = frozenset(
    "dr doctor physician surgeon pcp provider nurse attending resident fellow intern "
    "hospitalist consultant therapist pharmacist paramedic paramedics emt emts interpreter "
    "aide sitter chaplain manager worker officer guard student roommate neighbor neighbour "
    "coworker employer landlord friend partner spouse caregiver assailant np pa staff "
    "practitioner specialist dentist midwife doula technician tech counselor counsellor "
    # Staff whose titles end in neither -ologist nor -ician, and strangers at a scene.
    "dietitian dietician nutritionist phlebotomist technologist sonographer radiographer "
    "anesthetist crna cna lpn rn orderly transporter porter volunteer scribe coordinator "
    "navigator caseworker police policeman policewoman firefighter firefighters bystander "
    "passerby driver cyclist pedestrian stranger colleague supervisor boss teacher pastor "
    "priest float moonlighter ot assistant foreman witness owner coach trainer allergist "
    "intensivist internist optometrist orthodontist hygienist chiropractor educator player "
    "teammate classmate students guardian carer fiance fiancee passenger proxy "
    # British and American titles of doctors and staff, and people one lives or is held with.
    "gp gps registrar sho locum trainee houseman matron physio medic medics receptionist "
    "secretary clerk cleaner housekeeper responder lifeguard warden inmate inmates cellmate "
    "prisoner flatmate housemate workmate lodger tenant opponent visitor".split()
)

# People met at a scene, not in care: after "a stranger", "the man" is most likely them.
STRANGERS = frozenset(
    "stranger passerby driver cyclist pedestrian assailant attacker bystander witness player "
    "passenger intruder robber neighbor neighbour".split()
)

PREPOSITIONS = frozenset("by with from to of at for near against behind".split())
REPORTING = frozenset(
    "says said states stated reports reported notes noted thinks thought believes believed "
    "feels felt explains explained agrees agreed mentions mentioned adds added writes wrote "
    "documents documented recalls recalled confirms confirmed indicates indicated suspects "
    "worries worried say report state note think believe feel explain agree asks asked "
    "requests requested notified informed notices noticed observes observed".split()
)
# Verbs of asking someone to do something, which "he agreed" answers.
REQUESTS = frozenset(
    "asked offered recommended advised suggested proposed encouraged urged explained "
    "discussed".split()
)
# What links a clause about the patient to a third party's act on them.
AFTER_CARE = frozenset("and after when because since until before once as".split())
# An actor's motive or finding ("drove him in because he was worried", "started heparin after
# he found a clot").
MOTIVES = frozenset(
    "worried concerned afraid scared unsure thought felt wanted believed knew hoped saw found "
    "noticed noted heard discovered observed checked documented".split()
)
ASK = frozenset("asked asks ask".split())
# Verbs a quote follows or opens with: the speaker is their subject.
SPEECH = frozenset(
    "said says say asked asks ask told tells replied replies answered answers responded "
    "responds stated states thanked thanks added adds yelled shouted whispered cried "
    "exclaimed explained insisted called calls screamed muttered pleaded begged".split()
)
# Verbs of answering: their subject is not whoever asked.
ANSWERS = frozenset(
    "said says replied replies answered answers responded responds told tells".split()
)
# Words that open a clause inside a sentence ("when the resident examined him").
SUBORDINATORS = frozenset(
    "when after before until since because if whether although though while who that "
    "whereas once as".split()
)
# Main verbs of help given to someone ("he gave him aspirin", "she drove her to urgent care",
# "he told him to wait"): with an object pronoun of the same sex, the object is the one helped.
HELPS = frozenset(
    "gave give gives told tell tells helped help helps drove drive drives took take takes "
    "brought bring brings stayed stay stays waited wait waits sat sit sits walked walk walks "
    "wheeled carried carry carries lifted lift lifts fed feed feeds bathed bathe bathes "
    "dressed showed show shows handed hand hands reassured reassure reassures advised advise "
    "advises instructed instruct instructs reminded remind reminds encouraged encourage "
    "encourages assisted assist assists accompanied accompany accompanies sent send sends "
    "warned warn warns visited visit visits picked pick picks described describe describes "
    "urged urge urges persuaded persuade persuades convinced convince convinces "
    # Starting or stopping a treatment: "she started him on cephalexin", "tapered him off".
    "started start starts put puts tapered taper tapers weaned wean weans switched switch "
    "switches "
    # Moving or orienting someone: "he dragged him out", "she reoriented her".
    "dragged drag drags reoriented reorient reorients".split()
)
# Verbs whose object is often oneself: "dress herself", "hurt himself" (not emphasis).
SELF_CARE = frozenset(
    "dress dresses dressed feed feeds fed bathe bathes bathed wash washes washed toilet "
    "toilets toileted groom grooms groomed hurt hurts injure injures injured cut cuts harm "
    "harms harmed kill kills killed shoot shoots shot transfer transfers transferred "
    "position positions positioned".split()
)
# Words between a subject pronoun and its main verb that say nothing about the referent.
AUXILIARY = frozenset(
    "will would could can may might should must shall also still never not just already now "
    "last first recently previously personally "
    "then again only really reportedly apparently initially subsequently later".split()
)
BE = frozenset("is was were be been being 's am are".split())
HAVE = frozenset("has had have having".split())
# Main verbs that say what the patient is, has or undergoes.
PATIENT_VERBS = frozenset(
    "need needs needed lack lacks lacked tolerate tolerates tolerated deny denies denied "
    "fall falls fell collapse collapses collapsed present presents presented develop develops "
    "developed undergo undergoes underwent miss misses missed understand understands "
    "understood refuse refuses refused vomit vomits vomited vomiting sleep sleeps slept "
    "eat eats ate eaten complain complains complained endorse endorses endorsed sign signs signed "
    "choose chooses chose consent consents consented decline declines declined stop stops "
    "stopped pull pulls pulled hit hits "
    "lose loses lost gain gains gained suffer suffers suffered sustain sustains sustained "
    "experience experiences experienced appear appears appeared seem seems seemed "
    # Events of illness ("she coded", "he fainted at lunch", "responded well to the cycle").
    "respond responds responded code codes coded faint faints fainted seize seizes seized "
    "desaturate desaturates desaturated decompensate decompensates decompensated "
    "deteriorate deteriorates deteriorated ambulate ambulates ambulated".split()
)
# Main verbs of acts of care, done to the patient or for their care, never by a patient in a
# note ("he ordered a CT", "she drained the abscess", "he will examine him"): words a patient also
# does ("gave a history", "injects", "transferred to the chair", "plans to") are left out.
CARE_VERBS = frozenset(
    "order orders ordered prescribe prescribes prescribed administer administers administered "
    "perform performs performed place places placed insert inserts inserted remove removes "
    "removed drain drains drained biopsy biopsies biopsied examine examines examined review "
    "reviews reviewed recommend recommends recommended suggest suggests suggested intubate "
    "intubates intubated scope scopes scoped repair repairs repaired suture sutures sutured "
    "diagnose diagnoses diagnosed discharge discharges discharged adjust adjusts adjusted "
    "increase increases increased decrease decreases decreased titrate titrates titrated "
    "counsel counsels counseled counselled treat treats treated clip clips clipped page pages "
    "paged refer refers referred operate operates operated recheck rechecks rechecked "
    "laser lasers lasered resect resects resected excise excises excised ablate ablates ablated "
    "debride debrides debrided cauterize cauterizes cauterized immobilize immobilizes "
    "immobilized splint splints splinted restrict restricts restricted".split()
)
# After "is/was": care the patient receives, in the passive ("she was referred for genetic
# counselling", "he was started on insulin"); not "diagnosed" or "treated", which a relative of
# the family history also is.
PASSIVE_CARE = frozenset(
    "referred scheduled booked started prescribed intubated extubated sedated transfused "
    "discharged".split()
)
# After "is/was": states of a patient, never of a clinician in a note ("was hypotensive").
PATIENT_STATES = frozenset(
    "febrile afebrile hypotensive hypertensive tachycardic bradycardic hypoxic hypoxemic "
    "tachypneic diaphoretic septic lethargic somnolent obtunded unresponsive confused agitated "
    "combative drowsy tearful nauseated nauseous jaundiced icteric pale dizzy bleeding vomiting "
    "pregnant incontinent bedbound hypoglycemic hyperglycemic dehydrated intoxicated "
    "unconscious disoriented delirious".split()
)
# Words between "was" and a state that say nothing about the referent ("was more drowsy").
DEGREE = frozenset("more less very still now slightly mildly increasingly acutely".split())
FEEL = frozenset("feel feels felt feeling".split())
# After "is/was": a part a third party plays, not a state of the patient.
PARTS = frozenset(
    "hcp proxy contact guardian caregiver poa surrogate representative decision".split()
)
DETERMINERS = frozenset("the a an his her their this that these those".split())
OPINIONS = frozenset("opinion view judgment judgement assessment impression".split())
# After "his/her" with someone else named before: what a carer gives, not the patient ("he
# wants to follow his advice"; not "instructions", which are often the patient's own).
COUNSEL = frozenset("advice recommendation recommendations guidance expertise".split())

# What ends a clause inside a sentence.
CLAUSE_BREAK = re.compile(r"[,;:()]|\b(?:and|but|so|because|while|whereas|then)\b")
# "when she was a child", "since he was only a teenager": the patient's youth.
CHILDHOOD = re.compile(
    r"\s+\w+\s+(?:only\s+|just\s+|still\s+)?(?:a|an)\s+"
    r"(?:child|kid|teenager|teen|toddler|baby|infant|boy|girl|young)\b"
)
OPENING_QUOTE = re.compile(r"(?:^|(?<=[\s:,(]))['\"‘“](?=[A-Za-z])")

# Specialists by suffix: "cardiologist", "podiatrist", "physician", "neurosurgeon",
# "endoscopist", "physiotherapist".
# Specialists and staff by the endings of their titles: "orthopedist", "geneticist",
# "sonographer", "orthodontist", "prosthetist", "orthoptist", "perfusionist".
_SPECIALIST = re.compile(
    r"[a-z]+(?:ologist|iatrist|ician|surgeon|scopist|therapist|pedist|paedist|icist|ographer"
    r"|odontist|thetist|otist|optist|macist|ionist)$"
)


def is_role(word: str) -> bool:
    """Whether lower-case ``word`` names a person by role ("nurse", "cardiologist")."""
    return word in ROLES or bool(_SPECIALIST.match(word))


def is_person_word(word: str) -> bool:
    """Whether lower-case ``word`` names a person by role or kinship."""
    return is_role(word) or word in KIN_MALE or word in KIN_FEMALE
