"""The tokenizer's ready-to-load copy (agent/context/encoding_cache.py): the same counts as
tiktoken's own load, and a damaged or unwritable cache never stops a count."""

from __future__ import annotations

import pytest
import tiktoken

from agent.context.encoding_cache import cache_file, load
from agent.llm.offline import apply_offline_env

TEXT = "def f(x):\n    return x ** 2  # héllo wörld 🚀 " * 40


@pytest.fixture(autouse=True)
def _offline():
    apply_offline_env()


def test_the_cached_encoding_counts_as_tiktoken_does(tmp_path):
    reference = tiktoken.get_encoding("o200k_base")
    first = load("o200k_base", tmp_path)
    path = cache_file(tmp_path, "o200k_base", tiktoken.__version__)
    assert path.is_file()
    stamp = path.stat().st_mtime_ns
    again = load("o200k_base", tmp_path)  # read from the file this time
    assert path.stat().st_mtime_ns == stamp  # not rewritten
    assert first.encode(TEXT) == again.encode(TEXT) == reference.encode(TEXT)
    assert again.n_vocab == reference.n_vocab and again.name == "o200k_base"
    assert again.encode("<|endoftext|>", allowed_special="all") == reference.encode(
        "<|endoftext|>", allowed_special="all"
    )


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", b"\xe9\x00\x00"], ids=["empty", "text", "garbage"])
def test_a_damaged_cache_is_rebuilt(tmp_path, damage):
    path = cache_file(tmp_path, "o200k_base", tiktoken.__version__)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    assert load("o200k_base", tmp_path).encode(TEXT) == tiktoken.get_encoding("o200k_base").encode(TEXT)
    assert path.read_bytes() != damage


def test_a_cache_of_another_encoding_is_not_used(tmp_path):
    import marshal

    path = cache_file(tmp_path, "o200k_base", tiktoken.__version__)
    path.parent.mkdir(parents=True)
    path.write_bytes(
        marshal.dumps({"name": "cl100k_base", "pat_str": "x", "mergeable_ranks": {}, "special_tokens": {}})
    )
    assert load("o200k_base", tmp_path).name == "o200k_base"


def test_an_unwritable_folder_still_counts(tmp_path):
    (tmp_path / "cache").write_text("a file where the cache folder would go")  # mkdir fails, even as root
    assert load("o200k_base", tmp_path).encode(TEXT) == tiktoken.get_encoding("o200k_base").encode(TEXT)


def test_no_folder_means_tiktokens_own_load():
    assert load("o200k_base", None).encode(TEXT) == tiktoken.get_encoding("o200k_base").encode(TEXT)
