export const SUPPORTED_LOCALES = [
  'en', 'it', 'es', 'fr', 'de', 'pt', 'ja', 'ko', 'zh', 'nl',
  'pl', 'ru', 'sv', 'da', 'nb', 'fi', 'ar', 'he', 'th', 'vi',
] as const;
export type Locale = (typeof SUPPORTED_LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const isSupportedLocale = (value: string): value is Locale =>
  (SUPPORTED_LOCALES as readonly string[]).includes(value);
