/**
 * The components' few strings in the 20 locales Tollgate's emails speak (the server's SUPPORTED_LOCALES).
 * `{plan}` and `{days}` are filled in; amounts and dates are formatted with Intl for the locale.
 */
export const LOCALES = ['en', 'it', 'es', 'fr', 'de', 'pt', 'ja', 'ko', 'zh', 'nl', 'pl', 'ru', 'sv', 'da', 'nb', 'fi', 'ar', 'he', 'th', 'vi'] as const;
export type Locale = (typeof LOCALES)[number];

export interface Messages {
  billingPeriod: string;
  monthly: string;
  yearly: string;
  perMonth: string;
  perYear: string;
  recommended: string;
  currentPlan: string;
  trialDays: string;
  trialAvailable: string;
  subscribe: string;
  switchTo: string;
  signInToSubscribe: string;
  changeTitle: string;
  dueNow: string;
  confirm: string;
  cancel: string;
  loading: string;
  noPlans: string;
}

export const MESSAGES: Record<Locale, Messages> = {
  en: {
    billingPeriod: 'Billing period', monthly: 'Monthly', yearly: 'Yearly', perMonth: 'per month', perYear: 'per year',
    recommended: 'Recommended', currentPlan: 'Current plan', trialDays: '{days}-day free trial', trialAvailable: 'Free trial available',
    subscribe: 'Subscribe', switchTo: 'Switch to {plan}', signInToSubscribe: 'Sign in to subscribe', changeTitle: 'Change to {plan}',
    dueNow: 'Due now', confirm: 'Confirm', cancel: 'Cancel', loading: 'Loading…', noPlans: 'No plans are available yet.',
  },
  it: {
    billingPeriod: 'Periodo di fatturazione', monthly: 'Mensile', yearly: 'Annuale', perMonth: 'al mese', perYear: "all'anno",
    recommended: 'Consigliato', currentPlan: 'Piano attuale', trialDays: 'Prova gratuita di {days} giorni', trialAvailable: 'Prova gratuita disponibile',
    subscribe: 'Abbonati', switchTo: 'Passa a {plan}', signInToSubscribe: 'Accedi per abbonarti', changeTitle: 'Passa a {plan}',
    dueNow: 'Da pagare ora', confirm: 'Conferma', cancel: 'Annulla', loading: 'Caricamento…', noPlans: 'Nessun piano disponibile.',
  },
  es: {
    billingPeriod: 'Periodo de facturación', monthly: 'Mensual', yearly: 'Anual', perMonth: 'al mes', perYear: 'al año',
    recommended: 'Recomendado', currentPlan: 'Plan actual', trialDays: 'Prueba gratuita de {days} días', trialAvailable: 'Prueba gratuita disponible',
    subscribe: 'Suscribirse', switchTo: 'Cambiar a {plan}', signInToSubscribe: 'Inicia sesión para suscribirte', changeTitle: 'Cambiar a {plan}',
    dueNow: 'A pagar ahora', confirm: 'Confirmar', cancel: 'Cancelar', loading: 'Cargando…', noPlans: 'Todavía no hay planes disponibles.',
  },
  fr: {
    billingPeriod: 'Période de facturation', monthly: 'Mensuel', yearly: 'Annuel', perMonth: 'par mois', perYear: 'par an',
    recommended: 'Recommandé', currentPlan: 'Forfait actuel', trialDays: 'Essai gratuit de {days} jours', trialAvailable: 'Essai gratuit disponible',
    subscribe: "S'abonner", switchTo: 'Passer à {plan}', signInToSubscribe: 'Connectez-vous pour vous abonner', changeTitle: 'Passer à {plan}',
    dueNow: 'À payer maintenant', confirm: 'Confirmer', cancel: 'Annuler', loading: 'Chargement…', noPlans: "Aucun forfait n'est disponible pour le moment.",
  },
  de: {
    billingPeriod: 'Abrechnungszeitraum', monthly: 'Monatlich', yearly: 'Jährlich', perMonth: 'pro Monat', perYear: 'pro Jahr',
    recommended: 'Empfohlen', currentPlan: 'Aktueller Tarif', trialDays: '{days} Tage kostenlos testen', trialAvailable: 'Kostenlose Testphase verfügbar',
    subscribe: 'Abonnieren', switchTo: 'Zu {plan} wechseln', signInToSubscribe: 'Zum Abonnieren anmelden', changeTitle: 'Zu {plan} wechseln',
    dueNow: 'Jetzt fällig', confirm: 'Bestätigen', cancel: 'Abbrechen', loading: 'Wird geladen…', noPlans: 'Noch keine Tarife verfügbar.',
  },
  pt: {
    billingPeriod: 'Período de cobrança', monthly: 'Mensal', yearly: 'Anual', perMonth: 'por mês', perYear: 'por ano',
    recommended: 'Recomendado', currentPlan: 'Plano atual', trialDays: 'Teste grátis de {days} dias', trialAvailable: 'Teste grátis disponível',
    subscribe: 'Assinar', switchTo: 'Mudar para {plan}', signInToSubscribe: 'Entre para assinar', changeTitle: 'Mudar para {plan}',
    dueNow: 'A pagar agora', confirm: 'Confirmar', cancel: 'Cancelar', loading: 'Carregando…', noPlans: 'Ainda não há planos disponíveis.',
  },
  ja: {
    billingPeriod: '請求期間', monthly: '月払い', yearly: '年払い', perMonth: '/月', perYear: '/年',
    recommended: 'おすすめ', currentPlan: '現在のプラン', trialDays: '{days}日間の無料トライアル', trialAvailable: '無料トライアルあり',
    subscribe: '購読する', switchTo: '{plan}に変更', signInToSubscribe: 'ログインして購読', changeTitle: '{plan}に変更',
    dueNow: '今回のお支払い', confirm: '確定', cancel: 'キャンセル', loading: '読み込み中…', noPlans: '利用できるプランはまだありません。',
  },
  ko: {
    billingPeriod: '결제 주기', monthly: '월간', yearly: '연간', perMonth: '/월', perYear: '/년',
    recommended: '추천', currentPlan: '현재 요금제', trialDays: '{days}일 무료 체험', trialAvailable: '무료 체험 가능',
    subscribe: '구독하기', switchTo: '{plan}(으)로 변경', signInToSubscribe: '로그인하고 구독하기', changeTitle: '{plan}(으)로 변경',
    dueNow: '지금 결제할 금액', confirm: '확인', cancel: '취소', loading: '불러오는 중…', noPlans: '아직 이용 가능한 요금제가 없습니다.',
  },
  zh: {
    billingPeriod: '计费周期', monthly: '按月', yearly: '按年', perMonth: '/月', perYear: '/年',
    recommended: '推荐', currentPlan: '当前套餐', trialDays: '{days} 天免费试用', trialAvailable: '可免费试用',
    subscribe: '订阅', switchTo: '切换到 {plan}', signInToSubscribe: '登录后订阅', changeTitle: '切换到 {plan}',
    dueNow: '现在应付', confirm: '确认', cancel: '取消', loading: '加载中…', noPlans: '暂无可用套餐。',
  },
  nl: {
    billingPeriod: 'Factureringsperiode', monthly: 'Maandelijks', yearly: 'Jaarlijks', perMonth: 'per maand', perYear: 'per jaar',
    recommended: 'Aanbevolen', currentPlan: 'Huidig abonnement', trialDays: '{days} dagen gratis proberen', trialAvailable: 'Gratis proefperiode beschikbaar',
    subscribe: 'Abonneren', switchTo: 'Overstappen naar {plan}', signInToSubscribe: 'Log in om te abonneren', changeTitle: 'Overstappen naar {plan}',
    dueNow: 'Nu te betalen', confirm: 'Bevestigen', cancel: 'Annuleren', loading: 'Laden…', noPlans: 'Er zijn nog geen abonnementen beschikbaar.',
  },
  pl: {
    billingPeriod: 'Okres rozliczeniowy', monthly: 'Miesięcznie', yearly: 'Rocznie', perMonth: 'miesięcznie', perYear: 'rocznie',
    recommended: 'Polecany', currentPlan: 'Obecny plan', trialDays: 'Bezpłatny okres próbny: {days} dni', trialAvailable: 'Dostępny bezpłatny okres próbny',
    subscribe: 'Subskrybuj', switchTo: 'Przejdź na {plan}', signInToSubscribe: 'Zaloguj się, aby subskrybować', changeTitle: 'Przejdź na {plan}',
    dueNow: 'Do zapłaty teraz', confirm: 'Potwierdź', cancel: 'Anuluj', loading: 'Ładowanie…', noPlans: 'Brak dostępnych planów.',
  },
  ru: {
    billingPeriod: 'Период оплаты', monthly: 'Ежемесячно', yearly: 'Ежегодно', perMonth: 'в месяц', perYear: 'в год',
    recommended: 'Рекомендуем', currentPlan: 'Текущий тариф', trialDays: 'Бесплатный пробный период: {days} дн.', trialAvailable: 'Доступен бесплатный пробный период',
    subscribe: 'Подписаться', switchTo: 'Перейти на {plan}', signInToSubscribe: 'Войдите, чтобы подписаться', changeTitle: 'Переход на {plan}',
    dueNow: 'К оплате сейчас', confirm: 'Подтвердить', cancel: 'Отмена', loading: 'Загрузка…', noPlans: 'Тарифов пока нет.',
  },
  sv: {
    billingPeriod: 'Faktureringsperiod', monthly: 'Månadsvis', yearly: 'Årsvis', perMonth: 'per månad', perYear: 'per år',
    recommended: 'Rekommenderas', currentPlan: 'Nuvarande plan', trialDays: '{days} dagars gratis provperiod', trialAvailable: 'Gratis provperiod finns',
    subscribe: 'Prenumerera', switchTo: 'Byt till {plan}', signInToSubscribe: 'Logga in för att prenumerera', changeTitle: 'Byt till {plan}',
    dueNow: 'Att betala nu', confirm: 'Bekräfta', cancel: 'Avbryt', loading: 'Läser in…', noPlans: 'Inga planer finns ännu.',
  },
  da: {
    billingPeriod: 'Faktureringsperiode', monthly: 'Månedlig', yearly: 'Årlig', perMonth: 'om måneden', perYear: 'om året',
    recommended: 'Anbefalet', currentPlan: 'Nuværende abonnement', trialDays: '{days} dages gratis prøveperiode', trialAvailable: 'Gratis prøveperiode tilgængelig',
    subscribe: 'Abonnér', switchTo: 'Skift til {plan}', signInToSubscribe: 'Log ind for at abonnere', changeTitle: 'Skift til {plan}',
    dueNow: 'Skal betales nu', confirm: 'Bekræft', cancel: 'Annuller', loading: 'Indlæser…', noPlans: 'Der er ingen abonnementer endnu.',
  },
  nb: {
    billingPeriod: 'Faktureringsperiode', monthly: 'Månedlig', yearly: 'Årlig', perMonth: 'per måned', perYear: 'per år',
    recommended: 'Anbefalt', currentPlan: 'Nåværende plan', trialDays: '{days} dagers gratis prøveperiode', trialAvailable: 'Gratis prøveperiode tilgjengelig',
    subscribe: 'Abonner', switchTo: 'Bytt til {plan}', signInToSubscribe: 'Logg inn for å abonnere', changeTitle: 'Bytt til {plan}',
    dueNow: 'Å betale nå', confirm: 'Bekreft', cancel: 'Avbryt', loading: 'Laster inn…', noPlans: 'Ingen planer er tilgjengelige ennå.',
  },
  fi: {
    billingPeriod: 'Laskutusjakso', monthly: 'Kuukausittain', yearly: 'Vuosittain', perMonth: 'kuukaudessa', perYear: 'vuodessa',
    recommended: 'Suositeltu', currentPlan: 'Nykyinen tilaus', trialDays: '{days} päivän ilmainen kokeilu', trialAvailable: 'Ilmainen kokeilu saatavilla',
    subscribe: 'Tilaa', switchTo: 'Vaihda tilaukseen {plan}', signInToSubscribe: 'Kirjaudu sisään tilataksesi', changeTitle: 'Vaihda tilaukseen {plan}',
    dueNow: 'Maksettavaa nyt', confirm: 'Vahvista', cancel: 'Peruuta', loading: 'Ladataan…', noPlans: 'Tilauksia ei ole vielä saatavilla.',
  },
  ar: {
    billingPeriod: 'فترة الفوترة', monthly: 'شهريًا', yearly: 'سنويًا', perMonth: 'شهريًا', perYear: 'سنويًا',
    recommended: 'موصى به', currentPlan: 'الخطة الحالية', trialDays: 'تجربة مجانية لمدة {days} يومًا', trialAvailable: 'تتوفر تجربة مجانية',
    subscribe: 'اشترك', switchTo: 'التبديل إلى {plan}', signInToSubscribe: 'سجّل الدخول للاشتراك', changeTitle: 'التبديل إلى {plan}',
    dueNow: 'المستحق الآن', confirm: 'تأكيد', cancel: 'إلغاء', loading: 'جارٍ التحميل…', noPlans: 'لا توجد خطط متاحة بعد.',
  },
  he: {
    billingPeriod: 'תקופת חיוב', monthly: 'חודשי', yearly: 'שנתי', perMonth: 'לחודש', perYear: 'לשנה',
    recommended: 'מומלץ', currentPlan: 'התוכנית הנוכחית', trialDays: 'ניסיון חינם ל־{days} ימים', trialAvailable: 'ניסיון חינם זמין',
    subscribe: 'הרשמה למינוי', switchTo: 'מעבר ל־{plan}', signInToSubscribe: 'יש להתחבר כדי להירשם', changeTitle: 'מעבר ל־{plan}',
    dueNow: 'לתשלום עכשיו', confirm: 'אישור', cancel: 'ביטול', loading: 'טוען…', noPlans: 'אין עדיין תוכניות זמינות.',
  },
  th: {
    billingPeriod: 'รอบการเรียกเก็บเงิน', monthly: 'รายเดือน', yearly: 'รายปี', perMonth: 'ต่อเดือน', perYear: 'ต่อปี',
    recommended: 'แนะนำ', currentPlan: 'แพ็กเกจปัจจุบัน', trialDays: 'ทดลองใช้ฟรี {days} วัน', trialAvailable: 'มีช่วงทดลองใช้ฟรี',
    subscribe: 'สมัครสมาชิก', switchTo: 'เปลี่ยนเป็น {plan}', signInToSubscribe: 'เข้าสู่ระบบเพื่อสมัครสมาชิก', changeTitle: 'เปลี่ยนเป็น {plan}',
    dueNow: 'ยอดที่ต้องชำระตอนนี้', confirm: 'ยืนยัน', cancel: 'ยกเลิก', loading: 'กำลังโหลด…', noPlans: 'ยังไม่มีแพ็กเกจให้เลือก',
  },
  vi: {
    billingPeriod: 'Chu kỳ thanh toán', monthly: 'Hằng tháng', yearly: 'Hằng năm', perMonth: 'mỗi tháng', perYear: 'mỗi năm',
    recommended: 'Đề xuất', currentPlan: 'Gói hiện tại', trialDays: 'Dùng thử miễn phí {days} ngày', trialAvailable: 'Có dùng thử miễn phí',
    subscribe: 'Đăng ký', switchTo: 'Chuyển sang {plan}', signInToSubscribe: 'Đăng nhập để đăng ký', changeTitle: 'Chuyển sang {plan}',
    dueNow: 'Thanh toán ngay', confirm: 'Xác nhận', cancel: 'Hủy', loading: 'Đang tải…', noPlans: 'Chưa có gói nào.',
  },
};

const RTL: readonly Locale[] = ['ar', 'he'];

/** The supported locale for a tag (`pt-BR` is `pt`), or en. */
export function resolveLocale(tag: string | undefined | null): Locale {
  const language = (tag ?? '').toLowerCase().split(/[-_]/)[0] ?? '';
  return (LOCALES as readonly string[]).includes(language) ? (language as Locale) : 'en';
}

export const directionOf = (locale: Locale): 'rtl' | 'ltr' => (RTL.includes(locale) ? 'rtl' : 'ltr');

/** A message with its `{name}` placeholders filled in. */
export function format(message: string, values: Record<string, string | number> = {}): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** An amount in minor units as money in the locale (1000 usd is $10.00; 1000 jpy is ¥1,000). */
export function formatMoney(amount: number, currency: string, locale: string): string {
  const formatter = new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() });
  const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2;
  return formatter.format(amount / 10 ** digits);
}
