"""Name extraction on small realistic files in every required language (seed 001 §3.1 step 1)."""

from __future__ import annotations

import contextlib

import pytest

from agent.context.folding.names import (
    DEFINITION_NODES,
    EXTENSION_LANGUAGES,
    FoldSkip,
    extract_definitions,
    language_for,
)

SAMPLES: dict[str, tuple[str, list[str], list[str]]] = {
    # suffix: (source, container labels "kind Name", function names)
    ".py": (
        '''import os


class Repository:
    """Stores things."""

    def __init__(self, root):
        self.root = root

    @property
    def size(self):
        return len(os.listdir(self.root))


@decorator
def load(path):
    def helper():
        return 1
    return helper()


async def fetch(url):
    return url
''',
        ["class Repository"],
        ["__init__", "size", "load", "fetch"],
    ),
    ".js": (
        """import fs from "fs";

export class Cache {
  constructor(limit) { this.limit = limit; }
  get(key) { return this.map.get(key); }
}

function parseArgs(argv) {
  return argv.slice(2);
}

const formatLine = (line) => line.trim();

export default function main() {
  return parseArgs(process.argv);
}
""",
        ["class Cache"],
        ["constructor", "get", "parseArgs", "formatLine", "main"],
    ),
    ".ts": (
        """export interface Shape {
  area(): number;
}

export class Circle implements Shape {
  constructor(private r: number) {}
  area(): number { return Math.PI * this.r ** 2; }
}

abstract class Base {
  abstract describe(): string;
}

export function total(shapes: Shape[]): number {
  return shapes.reduce((s, x) => s + x.area(), 0);
}

export const double = (n: number): number => n * 2;
""",
        ["interface Shape", "class Circle", "class Base"],
        ["area", "constructor", "describe", "total", "double"],
    ),
    ".tsx": (
        """import React from "react";

interface Props { title: string }

export function Header({ title }: Props) {
  return <h1>{title}</h1>;
}

export const Footer = () => <footer>bye</footer>;

class Page extends React.Component<Props> {
  render() { return <div><Header title={this.props.title} /></div>; }
}
""",
        ["interface Props", "class Page"],
        ["Header", "Footer", "render"],
    ),
    ".go": (
        """package store

type Store struct {
\titems map[string]int
}

type Reader interface {
\tRead(key string) (int, bool)
}

func NewStore() *Store {
\treturn &Store{items: map[string]int{}}
}

func (s *Store) Read(key string) (int, bool) {
\tv, ok := s.items[key]
\treturn v, ok
}
""",
        ["struct Store", "interface Reader"],
        ["NewStore", "Read"],
    ),
    ".rs": (
        """use std::fmt;

pub struct Point {
    x: i32,
    y: i32,
}

pub trait Shape {
    fn area(&self) -> f64;
}

enum Color { Red, Green }

impl Point {
    pub fn new(x: i32, y: i32) -> Self { Point { x, y } }
    fn norm(&self) -> f64 { ((self.x * self.x + self.y * self.y) as f64).sqrt() }
}

fn main() {
    let p = Point::new(1, 2);
    println!("{}", p.norm());
}
""",
        ["struct Point", "trait Shape", "enum Color", "impl Point"],
        ["area", "new", "norm", "main"],
    ),
    ".java": (
        """package demo;

public interface Greeter {
    String greet(String name);
}

public class App implements Greeter {
    private final int count;

    public App(int count) { this.count = count; }

    @Override
    public String greet(String name) { return "hi " + name; }

    public static void main(String[] args) {
        System.out.println(new App(1).greet("x"));
    }
}
""",
        ["interface Greeter", "class App"],
        ["greet", "App", "main"],
    ),
    ".c": (
        """#include <stdio.h>

struct buffer {
    char *data;
    int len;
};

static int buffer_len(const struct buffer *b) {
    return b->len;
}

int main(int argc, char **argv) {
    struct buffer b = {0};
    printf("%d\\n", buffer_len(&b));
    return 0;
}
""",
        ["struct buffer"],
        ["buffer_len", "main"],
    ),
    ".cpp": (
        """#include <string>

namespace app {

class Widget {
public:
    Widget(int id) : id_(id) {}
    int id() const { return id_; }
private:
    int id_;
};

struct Options { bool verbose; };

int Widget_count() { return 1; }

}  // namespace app

std::string render(const app::Widget& w) {
    return std::to_string(w.id());
}
""",
        ["class Widget", "struct Options"],
        ["Widget", "id", "Widget_count", "render"],
    ),
    ".cs": (
        """using System;

namespace Demo
{
    public interface IRepo
    {
        int Count();
    }

    public class Repo : IRepo
    {
        public Repo() { }
        public int Count() { return 0; }
    }

    public struct Pair { public int A; }
}
""",
        ["interface IRepo", "class Repo", "struct Pair"],
        ["Count", "Repo"],
    ),
    ".rb": (
        """module Billing
  class Invoice
    def initialize(total)
      @total = total
    end

    def self.build(total)
      new(total)
    end

    def paid?
      false
    end
  end
end

def helper
  1
end
""",
        ["module Billing", "class Invoice"],
        ["initialize", "build", "paid?", "helper"],
    ),
    ".php": (
        """<?php

namespace App;

interface Mailer
{
    public function send(string $to): bool;
}

trait Loggable
{
    public function log(string $msg): void {}
}

class SmtpMailer implements Mailer
{
    public function __construct(private string $host) {}
    public function send(string $to): bool { return true; }
}

function format_address(string $a): string
{
    return trim($a);
}
""",
        ["interface Mailer", "trait Loggable", "class SmtpMailer"],
        ["send", "log", "__construct", "format_address"],
    ),
    ".kt": (
        """package demo

interface Source {
    fun read(): String
}

data class User(val name: String)

class Service(private val source: Source) {
    fun load(): User = User(source.read())
    fun save(user: User) {
        println(user)
    }
}

object Registry {
    fun lookup(id: Int): User? = null
}

fun main() {
    println("hi")
}
""",
        ["interface Source", "class User", "class Service", "object Registry"],
        ["read", "load", "save", "lookup", "main"],
    ),
    ".swift": (
        """import Foundation

protocol Drawable {
    func draw() -> String
}

struct Point {
    var x: Double
    func distance(to other: Point) -> Double { return 0 }
}

class Canvas: Drawable {
    init() {}
    func draw() -> String { return "" }
}

enum Mode { case a, b }

func makeCanvas() -> Canvas {
    return Canvas()
}
""",
        ["protocol Drawable", "struct Point", "class Canvas", "enum Mode"],
        ["draw", "distance", "init", "makeCanvas"],
    ),
}

# Beyond the required thirteen: the other pack languages in the table.
EXTRA_SAMPLES: dict[str, tuple[str, list[str], list[str]]] = {
    ".scala": (
        "trait Animal { def speak(): String }\n"
        'class Dog extends Animal {\n  def speak(): String = "woof"\n}\n'
        "object Main {\n  def main(args: Array[String]): Unit = println(new Dog().speak())\n}\n",
        ["trait Animal", "class Dog", "object Main"],
        ["speak", "main"],
    ),
    ".lua": (
        "local M = {}\nfunction M.greet(name)\n  return 'hi ' .. name\nend\n"
        "local function helper()\n  return 1\nend\nreturn M\n",
        [],
        ["M.greet", "helper"],
    ),
    ".sh": ("#!/bin/sh\nsetup() {\n  echo hi\n}\nfunction main {\n  setup\n}\nmain\n", [], ["setup", "main"]),
}


def _split(source: str, suffix: str):
    definitions = extract_definitions(source.encode(), language_for("file" + suffix))
    containers = [f"{d.kind} {d.name}" for d in definitions if not d.is_function]
    functions = [d.name for d in definitions if d.is_function]
    return definitions, containers, functions


@pytest.mark.parametrize("suffix", sorted({**SAMPLES, **EXTRA_SAMPLES}))
def test_names_kept_per_language(suffix):
    source, containers, functions = {**SAMPLES, **EXTRA_SAMPLES}[suffix]
    _, got_containers, got_functions = _split(source, suffix)
    assert got_containers == containers
    assert set(got_functions) == set(functions)


def test_required_languages_are_covered():
    required = {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "ruby",
        "php",
        "kotlin",
        "swift",
    }
    assert required <= set(DEFINITION_NODES)
    assert required <= {language_for("f" + suffix) for suffix in SAMPLES}


def test_every_table_language_loads_from_the_pack():
    from tree_sitter_language_pack import get_language

    assert set(EXTENSION_LANGUAGES.values()) <= set(DEFINITION_NODES)
    for language in DEFINITION_NODES:
        assert get_language(language) is not None


def test_methods_are_functions_inside_their_class_and_closures_are_not_kept():
    definitions, _, functions = _split(SAMPLES[".py"][0], ".py")
    repository = next(i for i, d in enumerate(definitions) if d.name == "Repository")
    init = next(d for d in definitions if d.name == "__init__")
    load = next(d for d in definitions if d.name == "load")
    assert (init.depth, init.scope) == (1, repository)
    assert (load.depth, load.scope) == (0, -1)
    assert "helper" not in functions  # nested inside load's body
    assert definitions[repository].start_line == 4 and definitions[repository].end_line == 12


def test_definitions_come_in_source_order():
    definitions, _, _ = _split(SAMPLES[".java"][0], ".java")
    starts = [d.start_line for d in definitions]
    assert starts == sorted(starts)


def test_c_struct_uses_are_not_definitions():
    source = "struct point { int x; };\nstruct point origin;\nstruct point *make(void) { return 0; }\n"
    _, containers, functions = _split(source, ".c")
    assert containers == ["struct point"]
    assert functions == ["make"]


def test_cpp_out_of_class_method_keeps_its_qualified_name():
    source = 'class A { int f(); };\nint A::f() { return 1; }\nstatic const char *name(void) { return "a"; }\n'
    _, containers, functions = _split(source, ".cpp")
    assert containers == ["class A"]
    assert functions == ["A::f", "name"]


def test_syntax_errors_and_unknown_languages_raise_fold_skip():
    with pytest.raises(FoldSkip, match="unparsable"):
        extract_definitions(b"def broken(:\n    return (\n", "python")
    with pytest.raises(FoldSkip, match="unknown language"):
        extract_definitions(b"x", "cobol-2099")


def test_language_for_uses_the_suffix_case_insensitively():
    assert language_for("Main.JAVA") == "java"
    assert language_for("component.tsx") == "tsx"
    assert language_for("README") is None
    assert language_for("notes.txt") is None


def test_a_small_error_in_a_large_file_does_not_hide_it():
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(30)) + "def broken(:\n    pass\n"
    _, _, functions = _split(source, ".py")
    assert {f"f{i}" for i in range(30)} <= set(functions)


def test_pathological_nesting_is_skipped_not_raised():
    source = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    with contextlib.suppress(FoldSkip):
        extract_definitions(source.encode(), "python")
