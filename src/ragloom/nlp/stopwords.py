"""Built-in stop words for Chinese and English queries.

These are the question words and function words a search query carries but a
chunk's relevance does not depend on (the words RAGFlow's ``rmWWW`` strips,
plus common function words). They are removed from *queries* only; chunk text
keeps them in the index so phrases still line up.

English entries are given unstemmed; :func:`english_stop_words` adds their
stems so that the check also works on analysed (stemmed) terms.
"""

from __future__ import annotations

from collections.abc import Callable

_CHINESE = """
    请问 请 问下 问一下 一下 的 地 得 之 是 是否 是不是 不是 了 吗 呢 吧 啊 呀 嘛 哦 哈
    什么 什么样 什么样的 什么时候 啥 啥样 是啥 啥是 咋 咋样 咋样了 怎么 怎么办 怎么样 怎样 怎么着
    如何 为什么 为啥 哪 哪个 哪些 哪里 哪儿 哪家 那家 哪位 哪种 何时 何地 何人 谁 多少 几
    有没有 有无 能否 可否 可以 能 应该 么
    在 和 与 及 以及 或 或者 也 都 就 还 又 把 被 对 对于 从 以 为 于 由 向 将 让 给 跟 同
    这 那 这个 那个 这些 那些 这里 那里 此 其 该
    我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 自己
    个 等 等等 着 过
    """

_ENGLISH = """
    what who whom whose how which where why when whats
    is are was were be been being am do does did done doing don't doesn't didn't
    has have had having can could should would wouldn't will won't shall may might must
    there here this that these those it its it's i i'm me my mine we us our ours you you're
    your yours he he's him his she she's her hers they they're them their theirs
    just please tell explain describe
    a an the and or if but so as by on in at up out down of to for from with into onto
    about over under than then also not no any some all each
    """

CHINESE_STOP_WORDS: frozenset[str] = frozenset(_CHINESE.split())
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_ENGLISH.split())


def english_stop_words(stem: Callable[[str], str]) -> frozenset[str]:
    """The English stop words together with their stems under ``stem``."""
    return ENGLISH_STOP_WORDS | frozenset(stem(w) for w in ENGLISH_STOP_WORDS)
