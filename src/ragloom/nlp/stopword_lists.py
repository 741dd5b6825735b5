"""Stop words of the languages besides Chinese and English (those are in :mod:`ragloom.nlp.stopwords`).

As for English: question words, pronouns, articles, prepositions, conjunctions and the forms of the
auxiliary verbs — words a question carries but a chunk's relevance does not depend on. They are removed
from queries only (chunks keep them in the index so that phrases line up). Numbers, content words and
comparatives ("mais alto": the highest) are never stop words (general-purpose lists such as stopwords-iso
hold "zweiten", "deux", "москва": words questions ask about). Korean verb stems that carry no topic (하, 되,
있) are listed as Kiwi gives them. Entries are unstemmed and lower case; the analysers add their stems.
Japanese entries are Sudachi's normalised forms (the analyser's terms), Korean ones the forms Kiwi gives
pronouns and bound nouns (particles and endings never reach the index: the Korean analyser drops them by
their tag).
"""

from __future__ import annotations

_LISTS = {
    "de": """
        was wer wen wem wessen wie welche welcher welches welchen welchem wo wohin woher wann warum weshalb
        wieso womit wodurch wofür worüber wozu
        der die das den dem des ein eine einer eines einem einen kein keine keinen keinem
        und oder aber sondern denn doch sowie als wenn ob dass weil da damit
        ich du er sie es wir ihr mich dich sich uns euch mir dir ihm ihnen ihn mein meine dein deine sein
        seine ihre ihren ihrem ihres unser unsere euer eure
        ist sind war waren bin bist sei wird werden wurde wurden worden hat haben hatte hatten habe
        kann können konnte muss müssen soll sollen sollte darf dürfen will wollen möchte
        in im an am auf aus bei mit nach von vom zu zum zur für über unter vor hinter neben zwischen durch
        gegen ohne um bis seit
        dies diese dieser dieses diesen diesem jene jener man auch noch nur schon sehr so nicht
        bitte gibt es
        """,
    "fr": """
        que quoi qui quel quelle quels quelles lequel laquelle lesquels comment où quand pourquoi combien
        qu' est-ce
        le la les l' un une des du de d' au aux
        et ou mais donc car ni si comme que
        je tu il elle on nous vous ils elles me te se lui leur leurs moi toi son sa ses mon ma mes ton ta tes
        notre nos votre vos ce cet cette ces ceci cela ça y en
        est sont était étaient été être suis es sommes êtes ai as a avons avez ont avait avaient eu avoir
        peut peuvent pouvez doit doivent faut fait faire
        dans sur sous avec sans pour par chez entre vers depuis pendant
        ne pas aussi très bien tout tous toute toutes
        s'il svp
        """,
    "es": """
        qué que quién quiénes cuál cuáles cómo dónde cuándo cuánto cuánta cuántos cuántas por qué
        el la los las lo un una unos unas del al de
        y e o u pero sino si porque como que ni
        yo tú él ella ello nosotros nosotras vosotros ellos ellas usted ustedes me te se le les nos os
        mi mis tu tus su sus nuestro nuestra nuestros nuestras
        este esta estos estas ese esa esos esas esto eso aquel aquella
        es son era eran fue fueron ser sido está están estaba estar he ha han hay había haber
        puede pueden debe deben hace hacer
        en con sin para por sobre entre hacia desde hasta durante contra según
        no muy también ya
        favor
        """,
    "it": """
        che cosa chi quale quali come dove quando perché quanto quanta quanti quante
        il lo la i gli le un uno una un' l' del dello della dei degli delle al allo alla ai agli alle
        dal dallo dalla dai dagli dalle nel nello nella nei negli nelle sul sullo sulla sui sugli sulle
        e ed o ma però se perché come né
        io tu lui lei noi voi loro mi ti si ci vi gli ne mio mia miei mie tuo tua suo sua suoi sue nostro
        nostra vostro vostra
        questo questa questi queste quello quella quelli quelle
        è sono era erano stato stata essere ho hai ha abbiamo avete hanno aveva avere
        può possono deve devono fa fare
        di a da in con su per tra fra verso senza
        non molto anche già
        """,
    "pt": """
        que quê quem qual quais como onde quando porque porquê quanto quanta quantos quantas
        o a os as um uma uns umas do da dos das ao aos à às no na nos nas num numa pelo pela pelos pelas
        e ou mas se porque como nem
        eu tu ele ela nós vós eles elas você vocês me te se lhe lhes nos vos meu minha meus minhas teu tua
        seu sua seus suas nosso nossa
        este esta estes estas esse essa esses essas isto isso aquele aquela aquilo
        é são era eram foi foram ser sido está estão estava estar tem têm tinha ter há havia haver
        pode podem deve devem faz fazer
        de em com sem para por sobre entre até desde durante contra
        não muito também já
        favor
        """,
    "nl": """
        wat wie welk welke hoe waar wanneer waarom hoeveel waarmee waardoor waarvoor
        de het een der des
        en of maar want dus als dan omdat dat of
        ik jij je hij zij ze wij we jullie u mij me hem haar ons hun mijn jouw zijn uw onze
        dit deze die dat daar hier er
        is zijn was waren ben bent wordt worden werd werden geworden heeft hebben had hadden heb
        kan kunnen kon moet moeten mag mogen zal zullen zou wil willen
        in op aan bij met naar van voor over onder tussen door uit tot zonder tegen om sinds
        niet geen ook nog al zeer heel erg
        alsjeblieft graag
        """,
    "ru": """
        что кто кого кому чем каким какой какая какое какие каков как где куда откуда когда почему зачем
        сколько чей чья чьё чьи ли
        и а но или да ни если то чтобы что как так же бы
        я ты он она оно мы вы они меня тебя его её ее нас вас их мне тебе ему ей нам вам им мной тобой ими
        мой моя моё мое мои твой твоя свой своя своё свое свои наш наша ваш ваша себя себе
        этот эта это эти тот та те такой такая такое такие
        есть был была было были быть будет будут является являются
        может могут можно нужно надо должен должна должны
        в во на с со к ко по за из от до у о об обо при про для без над под перед через между
        не нет очень уже ещё еще также тоже только
        пожалуйста
        """,
    "ar": """
        ما ماذا من متى أين اين كيف لماذا كم هل أي اي
        و أو او ثم لكن بل إذا اذا إن ان أن لأن لان كما
        أنا انا أنت انت هو هي نحن أنتم انتم هم هن
        هذا هذه ذلك تلك هؤلاء الذي التي الذين
        في على إلى الى من عن مع بين حتى منذ عند لدى ب ل ك
        كان كانت يكون تكون ليس قد لقد سوف
        لا لم لن غير كل بعض أيضا ايضا جدا فقط
        """,
    "ja": """
        何 なに なん 誰 だれ どこ いつ どう どの どれ どんな なぜ 幾つ いくつ いくら 如何
        は が を に で と の も へ や から まで より か ね よ な ぞ ぜ さ わ って という
        です ます だ た て で ない ある いる する なる れる られる せる させる ござる
        為る 居る 有る 成る 御座る 致す 頂く 出来る
        これ それ あれ この その あの ここ そこ あそこ こちら そちら
        こと もの ため よう 等 など ください 下さる
        私 僕 あなた 彼 彼女 我々
        """,
    "ko": """
        무엇 뭐 무슨 누구 누가 어디 언제 어떻게 어떤 왜 얼마 몇 어느
        것 거 수 등 때 중 및 또는 그리고 그러나 하지만
        나 저 너 우리 저희 당신 그 그녀 그들 이것 그것 저것 여기 거기 저기 이 저
        하 되 있 없 않 안 못 어떻 그렇 이렇 같
        """,
}

STOP_WORDS: dict[str, frozenset[str]] = {code: frozenset(words.split()) for code, words in _LISTS.items()}

# the words of a question's form ("wie oft", "combien de temps", "얼마나 자주"): not stop words for search (a
# chunk may say "oft"), but no key term of what the answer must state (English "how often" and Chinese 多久
# are in ragloom.generation.keyterms)
QUESTION_FORMS: dict[str, frozenset[str]] = {code: frozenset(words.split()) for code, words in {
    "de": "oft häufig lange lang viel viele spät früh weit groß alt",
    "fr": "combien fois temps fréquence souvent longtemps",
    "es": "cuánto cuánta cuántos cuántas frecuencia veces tiempo",
    "it": "quanto quanta quanti quante frequenza volte tempo spesso",
    "pt": "quanto quanta quantos quantas frequência vezes tempo",
    "nl": "vaak lang laat veel hoeveel",
    "ru": "часто долго сколько раз",
    "ar": "مرة كم",
    "ja": "頻度 くらい ぐらい どのくらい どれくらい 回",
    "ko": "얼마나 자주 몇 번",
}.items()}
