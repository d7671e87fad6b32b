'use client';

import { useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import { ErrorNote, OfferPasskey, RecordNameMismatch } from '@/app/console/_lib/ui';
import { LOCALE_CHOICES } from '@/server/api/console/locale-vocabulary';
import { type ChosenMethod as Method, NEW_CASE_FORM } from '@/server/api/console/method-vocabulary';

/**
 * A case opened from the console, for the helpdesk: a caller asks for a password reset, the agent
 * opens a case, mails the link or reads it out, and watches the case close. Same rules, billing and
 * events as the API; the server checks everything again.
 */
export function NewCaseForm() {
  const router = useRouter();
  const queries = useQueryApi();
  const templates = useQuery(queries.templates.list.queryOptions());
  const [templateName, setTemplateName] = useState('');
  const template = templates.data?.results.find((t) => t.name === templateName) ?? null;
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [methods, setMethods] = useState<Method[]>([NEW_CASE_FORM.initial]);
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState('');
  const [managerName, setManagerName] = useState('');
  const [managerEmail, setManagerEmail] = useState('');
  const [notes, setNotes] = useState('');
  const [recordNameMismatch, setRecordNameMismatch] = useState(false);
  const [offerPasskey, setOfferPasskey] = useState(false);
  const [locale, setLocale] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  // With a template, its methods; the fields it leaves to each case are asked here.
  const has = (method: Method) =>
    template
      ? template.verification_methods[method] === true &&
        (method === NEW_CASE_FORM.asksQuestion
          ? !template.custom_question_text
          : method === NEW_CASE_FORM.namesManager
            ? !template.manager_email
            : true)
      : methods.includes(method);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.cases.create.mutate({
        subject_email: email.trim(),
        subject_name: name.trim() || null,
        locale: locale || null,
        ...(template
          ? { template: template.name }
          : { verification_methods: Object.fromEntries(methods.map((m) => [m, true])) }),
        notes,
        ...(has(NEW_CASE_FORM.asksQuestion)
          ? { custom_question_text: question, custom_question_answer: answer }
          : {}),
        ...(has(NEW_CASE_FORM.namesManager)
          ? { manager_name: managerName, manager_email: managerEmail.trim() }
          : {}),
        ...(has(NEW_CASE_FORM.comparesNames) && recordNameMismatch ? { name_match: 'record' as const } : {}),
        ...(offerPasskey ? { offer_passkey: true } : {}),
      });
      router.push(`/console/cases/${created.id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="c-form c-panel" aria-labelledby="new-case">
      <h2 id="new-case">New case</h2>
      <label htmlFor="case-email">The person’s e-mail address</label>
      <input id="case-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      <label htmlFor="case-name">Their name (optional)</label>
      <input id="case-name" maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="case-locale">Their language</label>
      <select id="case-locale" value={locale} onChange={(e) => setLocale(e.target.value)}>
        <option value="">Their browser’s (or your team’s default)</option>
        {LOCALE_CHOICES.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
      {templates.data && templates.data.results.length > 0 ? (
        <>
          <label htmlFor="case-template">Template</label>
          <select id="case-template" value={templateName} onChange={(e) => setTemplateName(e.target.value)}>
            <option value="">None: choose the methods below</option>
            {templates.data.results.map((t) => (
              <option key={t.id} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </>
      ) : null}
      {template ? null : (
        <fieldset className="c-fieldset">
          <legend>How they prove who they are</legend>
          {NEW_CASE_FORM.choices.map(({ key: method, label }) => (
            <label key={method} className="c-check">
              <input
                type="checkbox"
                checked={has(method)}
                onChange={(e) =>
                  setMethods(e.target.checked ? [...methods, method] : methods.filter((m) => m !== method))
                }
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
      )}
      {has(NEW_CASE_FORM.asksQuestion) ? (
        <>
          <label htmlFor="case-question">The question</label>
          <input
            id="case-question"
            required
            maxLength={500}
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
          />
          <label htmlFor="case-answer">Its answer (stored hashed; capitals and spacing do not matter)</label>
          <input
            id="case-answer"
            required
            maxLength={200}
            value={answer}
            onChange={(e) => setAnswer(e.target.value)}
          />
        </>
      ) : null}
      {has(NEW_CASE_FORM.namesManager) ? (
        <>
          <label htmlFor="case-manager-name">Their manager’s name</label>
          <input
            id="case-manager-name"
            required
            maxLength={200}
            value={managerName}
            onChange={(e) => setManagerName(e.target.value)}
          />
          <label htmlFor="case-manager-email">Their manager’s e-mail address</label>
          <input
            id="case-manager-email"
            type="email"
            required
            value={managerEmail}
            onChange={(e) => setManagerEmail(e.target.value)}
          />
        </>
      ) : null}
      {has(NEW_CASE_FORM.comparesNames) && template?.name_match !== 'record' ? (
        <RecordNameMismatch
          checked={recordNameMismatch}
          onChange={setRecordNameMismatch}
          expected="the one given here"
        />
      ) : null}
      {template?.offer_passkey ? null : <OfferPasskey checked={offerPasskey} onChange={setOfferPasskey} />}
      <label htmlFor="case-notes">Notes for your team (optional)</label>
      <textarea id="case-notes" maxLength={2000} value={notes} onChange={(e) => setNotes(e.target.value)} />
      <ErrorNote error={error} />
      <div className="c-row">
        <button type="submit" className="c-button" disabled={busy || (!template && methods.length === 0)}>
          Open the case
        </button>
      </div>
    </form>
  );
}
