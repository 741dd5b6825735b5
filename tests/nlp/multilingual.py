"""Small corpora in the knowledge-base languages besides Chinese and English, written for the tests: in
each, three documents (a pump's maintenance, a bakery, a night train) and questions whose words are
other forms of the documents' words (Pumpen/Pumpe, pompes/pompe, насосы/насоса, 点検します/点検され,
펌프를/펌프는), so that the keyword side finds them only through the language's own analysis."""

from __future__ import annotations

from typing import Any

CORPORA: dict[str, dict[str, Any]] = {
    "de": {
        "docs": {
            "pumpe.md": "# Wartung der Pumpe\n\nDie Pumpe wird alle drei Monate gewartet. Bei der Wartung wechselt "
                        "der Techniker die Dichtungen und prüft den Druck von 4 bar.\n",
            "baeckerei.md": "# Bäckerei Sonnenschein\n\nDie Bäckerei öffnet werktags um 6 Uhr. Sonntags bleibt sie "
                            "geschlossen. Das Roggenbrot kostet 3,50 Euro.\n",
            "zug.md": "# Nachtzug nach Wien\n\nDer Nachtzug fährt täglich um 22 Uhr in Berlin ab. Die Fahrt "
                      "dauert elf Stunden.\n",
        },
        "questions": [("Wie oft werden Pumpen gewartet?", "pumpe.md"),
                      ("Wann öffnen Bäckereien?", "baeckerei.md"),
                      ("Wie lange dauern Fahrten im Nachtzug?", "zug.md")],
    },
    "fr": {
        "docs": {
            "pompe.md": "# Entretien de la pompe\n\nLa pompe est entretenue tous les trois mois. Le technicien "
                        "remplace les joints et contrôle la pression de 4 bars.\n",
            "boulangerie.md": "# Boulangerie du Port\n\nLa boulangerie ouvre à 6 heures en semaine. Elle est fermée "
                              "le dimanche. La baguette coûte 1,20 euro.\n",
            "train.md": "# Train de nuit pour Vienne\n\nLe train de nuit part chaque jour à 22 heures de Paris. "
                        "Le voyage dure onze heures.\n",
        },
        "questions": [("Tous les combien entretient-on les pompes ?", "pompe.md"),
                      ("À quelle heure ouvrent les boulangeries ?", "boulangerie.md"),
                      ("Combien de temps durent les voyages en train de nuit ?", "train.md")],
    },
    "es": {
        "docs": {
            "bomba.md": "# Mantenimiento de la bomba\n\nLa bomba se revisa cada tres meses. El técnico cambia las "
                        "juntas y comprueba la presión de 4 bares.\n",
            "panaderia.md": "# Panadería del Puerto\n\nLa panadería abre a las 6 de la mañana entre semana. Los "
                            "domingos está cerrada. La barra de pan cuesta 1,10 euros.\n",
            "tren.md": "# Tren nocturno a Lisboa\n\nEl tren nocturno sale todos los días a las 22 horas desde "
                       "Madrid. El viaje dura diez horas.\n",
        },
        "questions": [("¿Cada cuánto se revisan las bombas?", "bomba.md"),
                      ("¿Cuándo abren las panaderías?", "panaderia.md"),
                      ("¿Cuánto duran los viajes en trenes nocturnos?", "tren.md")],
    },
    "it": {
        "docs": {
            "pompa.md": "# Manutenzione della pompa\n\nLa pompa viene controllata ogni tre mesi. Il tecnico "
                        "sostituisce le guarnizioni e verifica la pressione di 4 bar.\n",
            "panetteria.md": "# Panetteria del Porto\n\nLa panetteria apre alle 6 nei giorni feriali. La domenica è "
                             "chiusa. Il pane costa 2 euro al chilo.\n",
            "treno.md": "# Treno notturno per Vienna\n\nIl treno notturno parte ogni giorno alle 22 da Roma. Il "
                        "viaggio dura tredici ore.\n",
        },
        "questions": [("Ogni quanto si controllano le pompe?", "pompa.md"),
                      ("A che ora aprono le panetterie?", "panetteria.md"),
                      ("Quanto durano i viaggi sui treni notturni?", "treno.md")],
    },
    "pt": {
        "docs": {
            "bomba.md": "# Manutenção da bomba\n\nA bomba é verificada a cada três meses. O técnico troca as "
                        "juntas e confere a pressão de 4 bar.\n",
            "padaria.md": "# Padaria do Porto\n\nA padaria abre às 6 horas nos dias úteis. Aos domingos fica "
                          "fechada. O pão custa 2 euros.\n",
            "comboio.md": "# Comboio noturno para Madrid\n\nO comboio noturno parte todos os dias às 22 horas de "
                          "Lisboa. A viagem dura dez horas.\n",
        },
        "questions": [("De quanto em quanto tempo se verificam as bombas?", "bomba.md"),
                      ("A que horas abrem as padarias?", "padaria.md"),
                      ("Quanto tempo duram as viagens nos comboios noturnos?", "comboio.md")],
    },
    "nl": {
        "docs": {
            "pomp.md": "# Onderhoud van de pomp\n\nDe pomp wordt elke drie maanden gecontroleerd. De monteur "
                       "vervangt de afdichtingen en meet de druk van 4 bar.\n",
            "bakkerij.md": "# Bakkerij De Haven\n\nDe bakkerij gaat op werkdagen om 6 uur open. Op zondag is zij "
                           "gesloten. Een brood kost 3 euro.\n",
            "trein.md": "# Nachttrein naar Wenen\n\nDe nachttrein vertrekt elke dag om 22 uur uit Amsterdam. De "
                        "reis duurt veertien uur.\n",
        },
        "questions": [("Hoe vaak worden pompen gecontroleerd?", "pomp.md"),
                      ("Hoe laat gaan bakkerijen open?", "bakkerij.md"),
                      ("Hoe lang duren reizen met nachttreinen?", "trein.md")],
    },
    "ru": {
        "docs": {
            "nasos.md": "# Обслуживание насоса\n\nНасос проверяют каждые три месяца. Техник меняет уплотнения и "
                        "измеряет давление 4 бара.\n",
            "pekarnya.md": "# Пекарня у порта\n\nПекарня открывается в 6 часов по будням. По воскресеньям она "
                           "закрыта. Хлеб стоит 50 рублей.\n",
            "poezd.md": "# Ночной поезд в Москву\n\nНочной поезд отправляется каждый день в 22 часа из "
                        "Санкт-Петербурга. Поездка длится восемь часов.\n",
        },
        "questions": [("Как часто проверяют насосы?", "nasos.md"),
                      ("Когда открываются пекарни?", "pekarnya.md"),
                      ("Сколько длятся поездки на ночных поездах?", "poezd.md")],
    },
    "ar": {
        "docs": {
            "madakha.md": "# صيانة المضخة\n\nيتم فحص المضخة كل ثلاثة أشهر. يستبدل الفني الحشوات ويقيس الضغط عند 4 "
                          "بار.\n",
            "makhbaz.md": "# مخبز الميناء\n\nيفتح المخبز في الساعة السادسة صباحا أيام العمل. ويغلق يوم الجمعة. "
                          "سعر الخبز ريالان.\n",
            "qitar.md": "# قطار الليل\n\nينطلق قطار الليل كل يوم في الساعة العاشرة مساء من الرياض. تستغرق الرحلة تسع "
                        "ساعات.\n",
        },
        "questions": [("كم مرة يتم فحص المضخات؟", "madakha.md"),
                      ("متى يفتح مخبز الميناء؟", "makhbaz.md"),
                      ("كم تستغرق رحلة قطار الليل؟", "qitar.md")],
    },
    "ja": {
        "docs": {
            "pump.md": "# ポンプの保守\n\nポンプは三か月ごとに点検されます。技術者がパッキンを交換し、圧力が4バールで"
                       "あることを確認します。\n",
            "bakery.md": "# 港のパン屋\n\nパン屋は平日の朝6時に開店します。日曜日は休業です。食パンは300円です。\n",
            "train.md": "# 夜行列車\n\n夜行列車は毎日22時に東京を出発します。所要時間は十時間です。\n",
        },
        "questions": [("ポンプはどのくらいの頻度で点検しますか？", "pump.md"),
                      ("パン屋は何時に開店しますか？", "bakery.md"),
                      ("夜行列車の所要時間は？", "train.md")],
    },
    "ko": {
        "docs": {
            "pump.md": "# 펌프 유지보수\n\n펌프는 석 달마다 점검됩니다. 기술자가 패킹을 교체하고 압력이 4바인지 "
                       "확인합니다.\n",
            "bakery.md": "# 항구 빵집\n\n빵집은 평일 아침 6시에 문을 엽니다. 일요일에는 문을 닫습니다. 식빵은 "
                         "3000원입니다.\n",
            "train.md": "# 야간 열차\n\n야간 열차는 매일 밤 10시에 서울에서 출발합니다. 이동 시간은 다섯 "
                        "시간입니다.\n",
        },
        "questions": [("펌프를 얼마나 자주 점검합니까?", "pump.md"),
                      ("빵집이 몇 시에 문을 엽니까?", "bakery.md"),
                      ("야간 열차로 이동하는 시간은 얼마입니까?", "train.md")],
    },
}

# one knowledge base, language "auto": each document in its own language, each question in its document's
AUTO: dict[str, Any] = {
    "docs": {
        "pumpe.md": CORPORA["de"]["docs"]["pumpe.md"],
        "boulangerie.md": CORPORA["fr"]["docs"]["boulangerie.md"],
        "train.md": CORPORA["ja"]["docs"]["train.md"],
        "poezd.md": CORPORA["ru"]["docs"]["poezd.md"],
    },
    "questions": [("Wie oft werden Pumpen gewartet?", "pumpe.md"),
                  ("À quelle heure ouvrent les boulangeries ?", "boulangerie.md"),
                  ("夜行列車の所要時間は？", "train.md"),
                  ("Сколько длятся поездки на ночных поездах?", "poezd.md")],
}
