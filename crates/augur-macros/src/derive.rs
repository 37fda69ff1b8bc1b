//! `#[derive(augur::Staged)]`: a `#[repr(C)]` struct as a second-stage
//! type. The derive implements `augur::CType` (the struct's `Type`, its
//! fields in order) and `Native` (compiled code takes the struct itself),
//! and a trait `<Name>Fields` with one method per field on `Dyn<Name>`:
//! `p.x()` is the field as a `Dyn`, assignable when the struct is; and
//! `augur::exec::Elem`, so that the interpreter's memory holds arrays of
//! it (field by field: every field's type must be an `Elem`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// C's keywords and the names `<stdint.h>`/`<stdbool.h>` take: a field or
/// struct called so would not compile as C.
const C_RESERVED: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "int8_t", "int16_t",
    "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t", "NULL",
];

pub(crate) fn staged(input: DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.span(),
            "#[derive(augur::Staged)] takes a struct",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new(
            input.span(),
            "#[derive(augur::Staged)] takes a struct with named fields",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[derive(augur::Staged)] takes a struct without generic parameters",
        ));
    }
    let repr_c = input
        .attrs
        .iter()
        .any(|a| a.path().is_ident("repr") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "C"));
    if !repr_c {
        return Err(syn::Error::new(
            name.span(),
            "#[derive(augur::Staged)] needs #[repr(C)]: the generated C lays the struct out as C does",
        ));
    }
    let c_name = name.to_string();
    if C_RESERVED.contains(&c_name.as_str()) {
        return Err(syn::Error::new(
            name.span(),
            format!("`{c_name}` cannot name a C struct"),
        ));
    }
    let mut names = Vec::new();
    let mut types = Vec::new();
    for f in &fields.named {
        let ident = f.ident.as_ref().expect("named fields");
        let field = ident.to_string();
        let field = field.strip_prefix("r#").unwrap_or(&field).to_string();
        if C_RESERVED.contains(&field.as_str()) {
            return Err(syn::Error::new(
                ident.span(),
                format!("`{field}` cannot name a field in C"),
            ));
        }
        names.push((ident.clone(), field));
        types.push(f.ty.clone());
    }
    let vis = &input.vis;
    let trait_name = format_ident!("{}Fields", name);
    let field_names = names.iter().map(|(_, n)| n);
    let methods = names
        .iter()
        .zip(&types)
        .enumerate()
        .map(|(i, ((ident, field), ty))| {
            let i = i as u32;
            let doc = format!("The field `{field}`.");
            (
                quote! {
                    #[doc = #doc]
                    fn #ident(self) -> ::augur::Dyn<#ty>;
                },
                quote! {
                    #[track_caller]
                    fn #ident(self) -> ::augur::Dyn<#ty> {
                        self.__field::<#ty>(#i)
                    }
                },
            )
        });
    let (decls, impls): (Vec<_>, Vec<_>) = methods.unzip();
    let idents: Vec<_> = names.iter().map(|(ident, _)| ident).collect();
    let indices: Vec<usize> = (0..idents.len()).collect();
    let trait_doc = format!("The fields of `Dyn<{c_name}>` (from `#[derive(augur::Staged)]`).");
    Ok(quote! {
        impl ::augur::CType for #name {
            fn ty() -> ::augur::ir::Type {
                ::augur::ir::Type::structure(
                    #c_name,
                    ::std::vec![#((::std::string::String::from(#field_names), <#types as ::augur::CType>::ty())),*],
                )
            }
        }

        impl ::augur::stage::ctype::Native for #name {
            type Abi = #name;
        }

        impl ::augur::exec::Elem for #name {
            fn ty() -> ::augur::ir::Type {
                <Self as ::augur::CType>::ty()
            }
            fn store(
                &self,
                mem: &mut ::augur::exec::Memory,
                ptr: ::augur::Value,
            ) -> ::augur::Result<()> {
                let ty = <Self as ::augur::CType>::ty();
                #(::augur::exec::Elem::store(
                    &self.#idents,
                    mem,
                    ::augur::__private::field_at(&ty, ptr, #indices)?,
                )?;)*
                ::std::result::Result::Ok(())
            }
            fn load(
                mem: &::augur::exec::Memory,
                ptr: ::augur::Value,
            ) -> ::augur::Result<Self> {
                let ty = <Self as ::augur::CType>::ty();
                ::std::result::Result::Ok(#name {
                    #(#idents: ::augur::exec::Elem::load(
                        mem,
                        ::augur::__private::field_at(&ty, ptr, #indices)?,
                    )?,)*
                })
            }
        }

        #[doc = #trait_doc]
        #vis trait #trait_name {
            #(#decls)*
        }

        impl #trait_name for ::augur::Dyn<#name> {
            #(#impls)*
        }
    })
}
