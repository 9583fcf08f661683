/**
 * Issue 26 §21: README's CLI section and the commands' `--help` agree. Every command has a row in
 * README's table and every row names commands and options that exist; the first-admin command of
 * the quick start takes `--data` like `serve`; and neither README nor `user create --help` offers
 * a password on the command line (ps shows argv to every user of the machine).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "./index.ts";
import { ferry } from "./test-helpers.ts";

const README = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");
const program = buildProgram();

/** Every command without subcommands, by its path ("user create"). */
function leafCommands(command: Command, path: string[] = []): Map<string, Command> {
  const leaves = new Map<string, Command>();
  for (const sub of command.commands) {
    const subPath = [...path, sub.name()];
    if (sub.commands.length > 0)
      for (const [name, leaf] of leafCommands(sub, subPath)) leaves.set(name, leaf);
    else leaves.set(subPath.join(" "), sub);
  }
  return leaves;
}

const commands = leafCommands(program);

/** The options `--help` shows for a command. */
const shownOptions = (command: Command) =>
  command.options.filter((option) => !option.hidden).map((option) => option.long as string);

interface Row {
  /** The command cell without its backticks, `\|` read as `|`. */
  text: string;
  /** The commands it names ("agency list|set|unset" names three). */
  paths: string[];
  /** Every --option it names. */
  options: string[];
}

/** The first code span of each row of the table under "## CLI". */
function readmeRows(): Row[] {
  const section = README.slice(README.indexOf("\n## CLI\n"), README.indexOf("\n## Configuration\n"));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `ferry"))
    .map((line) => {
      const text = (/`([^`]+)`/.exec(line)?.[1] ?? "").replaceAll("\\|", "|");
      let paths = [""];
      for (const word of text.split(/\s+/).slice(1)) {
        if (!/^[a-z0-9][a-z0-9-]*(\|[a-z0-9][a-z0-9-]*)*$/.test(word)) break; // `user 2fa-reset`
        paths = paths.flatMap((path) => word.split("|").map((name) => `${path} ${name}`.trim()));
      }
      return { text, paths, options: text.match(/--[a-z][a-z-]*/g) ?? [] };
    });
}

const rows = readmeRows();

test("README's CLI table has a row for every command, and each row's commands and options exist", () => {
  const named = new Set(rows.flatMap((row) => row.paths));
  expect([...commands.keys()].filter((path) => !named.has(path))).toEqual([]);
  for (const row of rows) {
    for (const path of row.paths) {
      if (path === "") {
        // `ferry --version`
        expect(row.options).toEqual(["--version"]);
        continue;
      }
      const command = commands.get(path);
      expect({ row: row.text, path, exists: command !== undefined }).toEqual({
        row: row.text,
        path,
        exists: true,
      });
      const offered = shownOptions(command as Command);
      expect({ row: row.text, unknown: row.options.filter((option) => !offered.includes(option)) }).toEqual({
        row: row.text,
        unknown: [],
      });
    }
  }
});

test("every command but the node agent takes --data, as README says", () => {
  const without = [...commands].filter(([, command]) => !shownOptions(command).includes("--data"));
  expect(without.map(([path]) => path)).toEqual(["node run"]);
  expect(README).toContain("`--data <dir>` (default `./data`, env `FERRY_DATA`; `node run`");
});

test("user create: README and --help both say the password comes from the terminal or stdin, never argv", async () => {
  const row = rows.find((r) => r.paths.includes("user create"));
  const rowLine = README.split("\n").find((line) => line.startsWith("| `ferry user create"));
  expect(row?.options).not.toContain("--password");
  expect(rowLine).toContain(
    "asks for the password (or reads stdin's first line), never from the command line",
  );

  const help = await ferry(["user", "create", "--help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).not.toContain("--password");
  expect(help.stdout.replace(/\s+/g, " ")).toContain(
    "is asked for at the terminal, or read from the first line of stdin, never from the command line",
  );
  // Nothing in README passes a password in argv.
  expect(README).not.toMatch(/user create[^\n]*--password/);
});

test("the quick start's first-admin command names the server's --data, and every option it uses exists", () => {
  const start = README.indexOf("\n## Quick start");
  const quickStart = README.slice(start, README.indexOf("\n## ", start + 1));
  const command = /^\.\/dist\/ferry (user create .*)$/m.exec(quickStart)?.[1] ?? "";
  const used = command.match(/--[a-z][a-z-]*/g) ?? [];
  expect(used).toEqual(["--email", "--role", "--data"]);
  const offered = shownOptions(commands.get("user create") as Command);
  expect(used.filter((option) => !offered.includes(option))).toEqual([]);
  // The same --data as the serve line above it (./data is serve's default).
  expect(command).toEndWith("--data ./data");
  expect(quickStart).toContain("with the server's `--data`");
});
