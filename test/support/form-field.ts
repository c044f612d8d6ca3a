// A form field for unit tests: a plain optional text box unless `extra` says otherwise.
import type { FormField } from '../../src/core/forms/form-fields.js';

export const field = (name: string, extra: Partial<FormField> = {}): FormField => ({
  name,
  label: name,
  formType: 'textbox',
  inputType: 'text',
  required: false,
  options: [],
  value: '',
  ...extra,
});
