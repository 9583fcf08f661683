import type { Country } from "./schema.ts";

/** Regional-indicator emoji of an ISO 3166-1 alpha-2 code ("HK" → 🇭🇰). */
export function flagOf(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return "🏳️";
  return String.fromCodePoint(...[...code].map((letter) => 0x1f1e6 + letter.charCodeAt(0) - 65));
}

const NAMES: [code: string, name: string][] = [
  ["HK", "香港"],
  ["TW", "台湾"],
  ["MO", "澳门"],
  ["CN", "中国"],
  ["JP", "日本"],
  ["KR", "韩国"],
  ["SG", "新加坡"],
  ["MY", "马来西亚"],
  ["TH", "泰国"],
  ["VN", "越南"],
  ["PH", "菲律宾"],
  ["ID", "印度尼西亚"],
  ["IN", "印度"],
  ["KH", "柬埔寨"],
  ["MN", "蒙古"],
  ["KZ", "哈萨克斯坦"],
  ["AE", "阿联酋"],
  ["TR", "土耳其"],
  ["IL", "以色列"],
  ["SA", "沙特阿拉伯"],
  ["US", "美国"],
  ["CA", "加拿大"],
  ["MX", "墨西哥"],
  ["BR", "巴西"],
  ["AR", "阿根廷"],
  ["CL", "智利"],
  ["GB", "英国"],
  ["DE", "德国"],
  ["FR", "法国"],
  ["NL", "荷兰"],
  ["IT", "意大利"],
  ["ES", "西班牙"],
  ["PT", "葡萄牙"],
  ["CH", "瑞士"],
  ["SE", "瑞典"],
  ["NO", "挪威"],
  ["FI", "芬兰"],
  ["DK", "丹麦"],
  ["IE", "爱尔兰"],
  ["PL", "波兰"],
  ["AT", "奥地利"],
  ["BE", "比利时"],
  ["CZ", "捷克"],
  ["RO", "罗马尼亚"],
  ["UA", "乌克兰"],
  ["RU", "俄罗斯"],
  ["AU", "澳大利亚"],
  ["NZ", "新西兰"],
  ["ZA", "南非"],
  ["EG", "埃及"],
  ["NG", "尼日利亚"],
];

/** The country picker's list (`GET /country/country.json`, seed 001 §2.3). */
export const COUNTRIES: readonly Country[] = NAMES.map(([code, name]) => ({
  code,
  name,
  flag: flagOf(code),
}));

const BY_CODE = new Map(COUNTRIES.map((country) => [country.code, country]));

/** The stored code as the wire's `country` object; an unknown or empty code gets a white flag. */
export function countryOf(code: string): Country {
  return BY_CODE.get(code) ?? { code, name: code, flag: flagOf(code) };
}

/** English names for subscriptions with English node names (docs/decisions.md "Profile toggles"). */
const ENGLISH_NAMES: Record<string, string> = {
  HK: "Hong Kong",
  TW: "Taiwan",
  MO: "Macau",
  CN: "China",
  JP: "Japan",
  KR: "Korea",
  SG: "Singapore",
  MY: "Malaysia",
  TH: "Thailand",
  VN: "Vietnam",
  PH: "Philippines",
  ID: "Indonesia",
  IN: "India",
  KH: "Cambodia",
  MN: "Mongolia",
  KZ: "Kazakhstan",
  AE: "UAE",
  TR: "Turkey",
  IL: "Israel",
  SA: "Saudi Arabia",
  US: "United States",
  CA: "Canada",
  MX: "Mexico",
  BR: "Brazil",
  AR: "Argentina",
  CL: "Chile",
  GB: "United Kingdom",
  DE: "Germany",
  FR: "France",
  NL: "Netherlands",
  IT: "Italy",
  ES: "Spain",
  PT: "Portugal",
  CH: "Switzerland",
  SE: "Sweden",
  NO: "Norway",
  FI: "Finland",
  DK: "Denmark",
  IE: "Ireland",
  PL: "Poland",
  AT: "Austria",
  BE: "Belgium",
  CZ: "Czechia",
  RO: "Romania",
  UA: "Ukraine",
  RU: "Russia",
  AU: "Australia",
  NZ: "New Zealand",
  ZA: "South Africa",
  EG: "Egypt",
  NG: "Nigeria",
};

/** The English name of a listed country code, or null. */
export const englishCountryName = (code: string): string | null => ENGLISH_NAMES[code] ?? null;
