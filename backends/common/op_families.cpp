// The planning table of validate_op(): the entries the families' <family>_rules.cpp register.
#include "op_families.h"

#include "status.h"

namespace tgl {

const FamilyRules& family_rules(const OpInfo& info) {
    // Never destroyed: host threads may still run ops while the process exits (static destructors
    // run then; PluginLifetime.ProcessExitsWithDevicesOpenAndThreadsBusy).
    static const std::vector<FamilyRules>& families = *new std::vector<FamilyRules>(registered_family_rules());
    return family_entry(families, info, "the planning rules (register_<family>_rules, backends/common)");
}

void missing_family(const OpInfo& info, const char* table) {
    fail(TGL_ERROR_INTERNAL,
         "op '%s': its op family (OpFamily %d) has no entry in %s; each family of TGL_OP_FAMILIES registers its "
         "own (docs/adding-an-op-family.md)",
         info.name, int(info.family), table);
}

}  // namespace tgl
