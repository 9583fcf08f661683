/**
 * Node names for customers who turned on use_english_node (docs/decisions.md "Profile toggles"):
 * the admin writes line names in Chinese ("🇯🇵 日本 01", "香港中转"); the English name keeps
 * everything that is not Chinese, turns country names and a few common line words into English,
 * and starts with the node's own country when the name does not already name it.
 */
import { COUNTRIES, englishCountryName } from "../modules/node-record/countries.ts";

/** Regions written with 中国 in front, and words admins put in line names (seed 000 §1 selling points). */
const GLOSSARY: [chinese: string, english: string][] = [
  ["中国香港", "Hong Kong"],
  ["中国台湾", "Taiwan"],
  ["中国澳门", "Macau"],
  ["中转", "Relay"],
  ["专线", "Dedicated"],
  ["家宽", "Residential"],
  ["住宅", "Residential"],
  ["原生", "Native"],
  ["直连", "Direct"],
  ["备用", "Backup"],
];

/** Country names and glossary words, longest first so "印度尼西亚" wins over "印度". */
const REPLACEMENTS: [chinese: string, english: string][] = [
  ...COUNTRIES.flatMap((country): [string, string][] => {
    const english = englishCountryName(country.code);
    return english ? [[country.name, english]] : [];
  }),
  ...GLOSSARY,
].sort((a, b) => b[0].length - a[0].length);

/** Chinese, Japanese and Korean script and CJK punctuation: what is left untranslated is dropped. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f]/gu;
const LEADING_FLAG = /^(\p{Regional_Indicator}{2})\s*/u;
/** What a name falls back to when nothing of it is left (a purely Chinese name, no country). */
export const FALLBACK_NAME = "Node";

function tidy(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/([([])\s+/g, "$1")
    .replace(/\s+([)\]])/g, "$1")
    .replace(/\(\)|\[\]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * "🇯🇵 日本 01" (JP) → "🇯🇵 Japan 01"; "香港中转" (HK) → "Hong Kong Relay"; "专线 A" (US) →
 * "United States Dedicated A". Full-width letters and digits become ASCII (NFKC); `,` and `=`
 * are removed.
 */
export function englishName(name: string, countryCode: string): string {
  let text = name.normalize("NFKC");
  for (const [chinese, english] of REPLACEMENTS) text = text.replaceAll(chinese, ` ${english} `);
  // NFKC turns a full-width "，" or "＝" into the separators the formats forbid in names.
  text = tidy(text.replace(CJK, " ").replace(/[,=]/g, " "));
  const country = englishCountryName(countryCode);
  if (country && !text.includes(country)) {
    const flag = LEADING_FLAG.exec(text);
    text = flag ? `${flag[1]} ${country} ${text.slice(flag[0].length)}` : `${country} ${text}`;
    text = tidy(text);
  }
  return text === "" ? FALLBACK_NAME : text;
}
