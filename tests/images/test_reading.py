"""Which paths a prompt attaches, and what a file must be to be attached (agent/images.py)."""

from __future__ import annotations

import pytest

from agent.images import MAX_IMAGE_TOKENS, ImageError, image_tokens, prompt_images, read_image, referenced_paths, sniff
from tests.images.fixtures import gif, jpeg, png, webp_lossless, webp_lossy, webp_vp8x


@pytest.mark.parametrize(
    "data, expected",
    [
        (png(3, 2), ("image/png", 3, 2)),
        (jpeg(640, 480), ("image/jpeg", 640, 480)),
        (gif(7, 6), ("image/gif", 7, 6)),
        (webp_vp8x(900, 800), ("image/webp", 900, 800)),
        (webp_lossless(11, 10), ("image/webp", 11, 10)),
        (webp_lossy(13, 12), ("image/webp", 13, 12)),
    ],
)
def test_type_and_size_come_from_the_header(data, expected):
    assert sniff(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"hello",
        png()[:20],
        b"\xff\xd8\xff\xe0\x00",
        b"GIF89a\x00",
        b"RIFF\x00\x00\x00\x00WEBPVP8 ",
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + b"IHDR" + b"\x00" * 8,
    ],
)
def test_not_an_image_or_a_cut_header_is_refused(data):
    with pytest.raises(ImageError):
        sniff(data)


def test_size_cap_is_checked_before_reading(tmp_path):
    big = tmp_path / "big.png"
    big.write_bytes(png() + b"\x00" * 2000)
    with pytest.raises(ImageError, match="limit"):
        read_image(big, max_bytes=1000)
    assert read_image(big, max_bytes=5000).ref.width == 3


def test_a_folder_named_like_an_image_is_not_one(tmp_path):
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(ImageError):
        read_image(tmp_path / "dir.png")


def test_token_estimate_is_area_over_750_capped():
    assert image_tokens(750, 1) == 1
    assert image_tokens(1000, 1000) == 1334
    assert image_tokens(4000, 3000) == MAX_IMAGE_TOKENS


def test_the_forms_a_prompt_names_images_in():
    text = (
        'look at @a.png, @"my shot.jpg" and "/abs/path with space/x.webp" then /tmp/b.gif. '
        "also ./rel/c.jpeg and /esc\\ aped/d.png and file:///u/e%20f.png; mention logo.png in prose; "
        "email me@example.com"
    )
    assert referenced_paths(text) == [
        ("a.png", True),
        ("my shot.jpg", True),
        ("/abs/path with space/x.webp", False),
        ("/tmp/b.gif", False),
        ("./rel/c.jpeg", False),
        ("/esc aped/d.png", False),
        ("/u/e f.png", False),
    ]


def test_prompt_images_reads_each_file_once_and_skips_what_is_not_there(tmp_path):
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "a.png").write_bytes(png())
    (tmp_path / "copy.png").write_bytes(png())  # the same bytes: attached once
    found = prompt_images(f"@shots/a.png and {tmp_path}/copy.png and ./not/there.png", tmp_path, model="m", vision=True)
    assert [a.ref.name for a in found.attachments] == ["a.png"]
    assert found.notices == [("[image: a.png, 3x2] attached", "info")]


def test_without_vision_nothing_is_attached_and_the_notice_says_why(tmp_path):
    (tmp_path / "a.png").write_bytes(png())
    found = prompt_images("@a.png", tmp_path, model="openai/gpt-3.5-turbo", vision=False)
    assert found.attachments == [] and found.meta() == {}
    assert found.notices == [
        (
            "openai/gpt-3.5-turbo does not take images (litellm's model map says so); "
            "the prompt was sent without a.png.",
            "warning",
        )
    ]


def test_a_project_commands_body_is_not_read_for_paths():
    """A repository's command file must not pick pictures off the disk; what the user typed after it counts."""
    text = '<command name="review">\nAlso look at @/home/u/secret.png\n</command>\n\nand @mine.png'
    assert referenced_paths(text) == [("mine.png", True)]
