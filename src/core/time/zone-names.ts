// Time zone names as the IANA database spells them today. Intl (CLDR) still lists some under their old
// names (Asia/Calcutta, Europe/Kiev); both are valid everywhere, but operators look for the current one.
/** CLDR's legacy name -> the IANA canonical name (every pair resolves to the same zone). */
export const CANONICAL_ZONE_NAMES: Readonly<Record<string, string>> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Europe/Kiev': 'Europe/Kyiv',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Louisville': 'America/Kentucky/Louisville',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'America/Coral_Harbour': 'America/Atikokan',
};

export const canonicalZoneName = (name: string) => CANONICAL_ZONE_NAMES[name] ?? name;

/** The zones to choose from, by their canonical names, sorted. */
export function zoneChoices(): string[] {
  return [...new Set(Intl.supportedValuesOf('timeZone').map(canonicalZoneName))].sort();
}
