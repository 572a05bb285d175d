export const SUPPORTED_LOCALES = [
  'en',
  'it',
  'es',
  'fr',
  'de',
  'pt',
  'ja',
  'ko',
  'zh',
  'nl',
  'pl',
  'ru',
  'sv',
  'da',
  'nb',
  'fi',
  'ar',
  'he',
  'th',
  'vi',
] as const;
export type Locale = (typeof SUPPORTED_LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const isSupportedLocale = (value: string): value is Locale => (SUPPORTED_LOCALES as readonly string[]).includes(value);

/** Locales written right to left. */
const RTL_LOCALES: readonly Locale[] = ['ar', 'he'];
export const isRtlLocale = (locale: Locale): boolean => RTL_LOCALES.includes(locale);

/** Language subtags that mean a supported locale under another code. */
const LANGUAGE_ALIASES: Record<string, Locale> = {
  no: 'nb', // Norwegian, macrolanguage
  nn: 'nb', // Norwegian Nynorsk: Bokmål is the closest supported written form
  iw: 'he', // deprecated code for Hebrew
};

const LANGUAGE_TAG = /^[a-z]{2,3}(?:[-_][a-z0-9]{1,8})*$/i;

/**
 * The supported locale a BCP 47 language tag stands for, falling back from region and script to
 * the language (`pt-BR` -> `pt`, `zh-Hant-TW` -> `zh`); null when the language is not supported.
 */
export function matchLocale(tag: string): Locale | null {
  const t = tag.trim();
  if (!LANGUAGE_TAG.test(t)) return null;
  const language = t.split(/[-_]/)[0]!.toLowerCase();
  if (isSupportedLocale(language)) return language;
  return LANGUAGE_ALIASES[language] ?? null;
}

/**
 * The language tags of an Accept-Language header, most preferred first: ordered by q-value (1 when
 * absent), ties kept in header order; `q=0` ranges and `*` are dropped, malformed entries ignored.
 */
export function parseAcceptLanguage(header: string | null | undefined): string[] {
  if (!header) return [];
  const entries: { tag: string; q: number; index: number }[] = [];
  header.split(',').forEach((part, index) => {
    const [rawTag, ...params] = part.trim().split(';');
    const tag = rawTag?.trim() ?? '';
    if (!tag || tag === '*' || !LANGUAGE_TAG.test(tag)) return;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9](?:\.[0-9]{0,3})?)\s*$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
      else if (/^\s*q\s*=/.test(p)) q = -1;
    }
    if (q > 0) entries.push({ tag, q, index });
  });
  return entries.sort((a, b) => b.q - a.q || a.index - b.index).map((e) => e.tag);
}

/** The first supported locale of an Accept-Language header, with region fallback; null if none. */
export function localeFromAcceptLanguage(header: string | null | undefined): Locale | null {
  for (const tag of parseAcceptLanguage(header)) {
    const locale = matchLocale(tag);
    if (locale) return locale;
  }
  return null;
}

export interface LocaleSources {
  /** `locale` of the request body, already validated. */
  requested?: Locale | null;
  /** The user's stored preference. */
  stored?: Locale | null;
  /** The raw Accept-Language header. */
  acceptLanguage?: string | null;
  projectDefault?: Locale | null;
}

/**
 * Picks the locale of a message, first match wins: (1) the request's locale, (2) the user's stored
 * preference, (3) Accept-Language, (4) the project's default locale, (5) English.
 */
export function resolveLocale(sources: LocaleSources): Locale {
  return sources.requested ?? sources.stored ?? localeFromAcceptLanguage(sources.acceptLanguage) ?? sources.projectDefault ?? DEFAULT_LOCALE;
}
